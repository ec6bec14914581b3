import type { Knex } from 'knex';

/**
 * When each activity-log entry was written (`recorded_at`), so the lag from a command's commit to
 * its entry in the log can be read from the database whatever carried the event there (the
 * benchmark's event latency, DESIGN §9). `clock_timestamp()`, not `now()`: an entry written late in
 * a long transaction gets its own time. Added without a default first, then given one, so the
 * table is not rewritten; entries older than the column keep null.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table activities add column recorded_at timestamptz');
  await knex.raw('alter table activities alter column recorded_at set default clock_timestamp()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table activities drop column recorded_at');
}
