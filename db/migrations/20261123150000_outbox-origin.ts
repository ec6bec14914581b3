import type { Knex } from 'knex';

/**
 * Each outbox row keeps the origin of the write that committed it (domain/commands/write-origin.ts:
 * its request id and, with tracing on, its W3C trace context), so the event jobs the relay or the
 * sweep publishes from it still name the request, and the event workers' spans join its trace.
 * Nullable: rows written before, or by hand, have none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbox', (t) => t.jsonb('origin').nullable());
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbox', (t) => t.dropColumn('origin'));
}
