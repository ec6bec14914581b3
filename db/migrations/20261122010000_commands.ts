import type { Knex } from 'knex';

/**
 * The write side's bookkeeping (DESIGN §1, §11):
 * - command_log: one row per command, written in the command's own transaction. Its primary key is
 *   what makes a redelivered command (stalled-job recovery, an Idempotency-Key repeat) return its
 *   recorded result instead of applying twice.
 * - outbox: the domain events of a command, committed with it and relayed to the event queues
 *   afterwards, so an event is never lost between commit and publish.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('command_log', (t) => {
    t.text('command_id').primary();
    t.text('name').notNullable();
    t.text('entity').notNullable();
    t.text('subject').notNullable();
    // Fingerprint of the request behind an Idempotency-Key: the same key with another body is a 409.
    t.text('request_hash');
    t.jsonb('result');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });

  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('event_id').notNullable().unique();
    t.jsonb('event').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('published_at', { useTz: true });
  });
  // The relay's sweep reads only what is still unpublished: keep that lookup small.
  await knex.raw('create index outbox_unpublished on outbox (id) where published_at is null');
  await knex.raw('create index outbox_published_at on outbox (published_at) where published_at is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox');
  await knex.schema.dropTableIfExists('command_log');
}
