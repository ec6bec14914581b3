import type { Knex } from 'knex';

/**
 * The outbox rows of one entity in commit order (outbox id): the activity log's recorder walks back
 * from an event to the entity's earlier events it has not recorded yet and records those first, so
 * one entity's entries are in the order its writes committed whatever order their event jobs were
 * taken in (db/activities/activity-log.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index outbox_entity on outbox ((event->>'entityType'), (event->>'entityId'), id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index outbox_entity');
}
