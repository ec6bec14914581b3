import type { Knex } from 'knex';

/**
 * Webhooks (DESIGN §16): the subscriptions an admin keeps (`/Subscriptions`) and every delivery
 * attempt the notification workers make (`/Subscriptions/<id>/Deliveries`). The secret is kept as
 * given to the client once: signing needs its bytes, so it cannot be stored as a hash. Deliveries go
 * with their subscription, and age out with the retention job (WEBHOOK_DELIVERY_RETENTION_HOURS).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_subscriptions', (t) => {
    t.increments('id').primary();
    t.text('url').notNullable();
    t.jsonb('events').notNullable();
    t.text('description');
    t.boolean('active').notNullable().defaultTo(true);
    t.text('secret').notNullable();
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('version').notNullable().defaultTo(1);
  });
  // What the notification workers read for every burst: the active ones.
  await knex.raw('create index webhook_subscriptions_active on webhook_subscriptions (id) where active');

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id').primary();
    t.integer('subscription_id').notNullable().references('id').inTable('webhook_subscriptions').onDelete('CASCADE');
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    t.integer('attempt').notNullable();
    t.integer('status_code');
    t.integer('duration_ms').notNullable();
    t.text('error');
    t.timestamp('next_retry_at', { useTz: true });
    t.timestamp('attempted_at', { useTz: true }).notNullable().defaultTo(knex.raw('clock_timestamp()'));
  });
  // `/Deliveries` newest first per subscription; "was this event delivered already?"; retention.
  await knex.raw('create index webhook_deliveries_recent on webhook_deliveries (subscription_id, id desc)');
  await knex.raw(
    'create index webhook_deliveries_delivered on webhook_deliveries (subscription_id, event_id) where status_code between 200 and 299',
  );
  await knex.raw('create index webhook_deliveries_attempted_at on webhook_deliveries (attempted_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_subscriptions');
}
