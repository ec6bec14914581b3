import type { Knex } from 'knex';

/**
 * Exact whole-set counts that cost the same at any size (issue 27). `$count` of a whole set was an
 * index-only scan of every key (10 ms at 158k schemes, 60 ms at 1.1M, growing with the table); a
 * count kept in step by the database answers it from a few rows instead.
 *
 * - `table_counts` holds, per table, rows in up to SLOTS slots: the slot a statement adds to is its
 *   backend's (`pg_backend_pid() % SLOTS`), so concurrent writers on different connections update
 *   different rows and do not queue behind each other; the set's count is the sum of its slots.
 * - Statement-level triggers with transition tables keep it: one update per INSERT or DELETE
 *   statement (a batch of 500 rows is one), in the writer's transaction, so a count read in any
 *   snapshot is exactly the number of rows that snapshot sees; a rollback undoes both. Foreign-key
 *   cascades fire them too; TRUNCATE clears the table's slots.
 * - Written out literally (a released migration never changes): test/integration/set-counts checks
 *   that every entity table of the definitions is counted, and that the counts match `count(*)`.
 */

const COUNTED_TABLES = [
  'schemes',
  'addresses',
  'companies',
  'building_types',
  'developments',
  'development_types',
  'development_statuses',
  'markets',
  'countries',
  'investment_events',
  'occupier_events',
  'portfolios',
  'scheme_market_boundaries',
  'scheme_companies',
  'investment_companies',
];

const SLOTS = 64;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table table_counts (
      table_name text not null,
      slot int not null,
      n bigint not null,
      primary key (table_name, slot)
    )`);
  await knex.raw(`
    create function table_counts_add() returns trigger language plpgsql as $$
    declare
      delta bigint;
    begin
      if tg_op = 'INSERT' then
        select count(*) into delta from added;
      else
        select -count(*) into delta from removed;
      end if;
      if delta <> 0 then
        insert into table_counts as c (table_name, slot, n)
        values (tg_table_name, pg_backend_pid() % ${SLOTS}, delta)
        on conflict (table_name, slot) do update set n = c.n + excluded.n;
      end if;
      return null;
    end $$`);
  await knex.raw(`
    create function table_counts_clear() returns trigger language plpgsql as $$
    begin
      delete from table_counts where table_name = tg_table_name;
      return null;
    end $$`);
  for (const table of COUNTED_TABLES) {
    await knex.raw(
      `create trigger ?? after insert on ?? referencing new table as added for each statement execute function table_counts_add()`,
      [`${table}_count_insert`, table],
    );
    await knex.raw(
      `create trigger ?? after delete on ?? referencing old table as removed for each statement execute function table_counts_add()`,
      [`${table}_count_delete`, table],
    );
    await knex.raw(`create trigger ?? after truncate on ?? for each statement execute function table_counts_clear()`, [
      `${table}_count_truncate`,
      table,
    ]);
    // CREATE TRIGGER holds a lock that blocks writers until the migration commits: no row can be
    // added between this count and the triggers taking over.
    await knex.raw(`insert into table_counts (table_name, slot, n) select ?, 0, count(*) from ?? having count(*) > 0`, [
      table,
      table,
    ]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of COUNTED_TABLES) {
    for (const kind of ['insert', 'delete', 'truncate']) {
      await knex.raw('drop trigger ?? on ??', [`${table}_count_${kind}`, table]);
    }
  }
  await knex.raw('drop function table_counts_add()');
  await knex.raw('drop function table_counts_clear()');
  await knex.raw('drop table table_counts');
}
