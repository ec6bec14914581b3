import type { Knex } from 'knex';

/**
 * Read models kept by the workers: the activity log (notification worker) and the search index
 * (view-rebuild worker): one weighted-free tsvector per searchable field of each entity row, so
 * `Field:term` and `searchFields` select rows of one field while a GIN index serves every term.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('activities', (t) => {
    t.increments('id').primary();
    // One row per event even when an event is delivered twice.
    t.uuid('event_id').notNullable().unique();
    t.text('event_type').notNullable();
    t.text('entity_type').notNullable();
    t.text('entity_id').notNullable();
    t.text('subject').notNullable();
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.jsonb('changed_fields').notNullable().defaultTo('[]');
    t.text('command_id');
    t.integer('version').notNullable().defaultTo(1); // entries never change; keyed reads still get an ETag
    t.index(['entity_type', 'entity_id']);
    t.index(['subject']);
    t.index(['occurred_at']);
    t.index(['event_type']);
  });

  await knex.schema.createTable('search_fields', (t) => {
    t.text('entity_type').notNullable();
    t.integer('entity_key').notNullable();
    t.text('field').notNullable();
    t.specificType('document', 'tsvector').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['entity_type', 'entity_key', 'field']);
  });
  await knex.raw('create index search_fields_document_gin on search_fields using gin (document)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('search_fields');
  await knex.schema.dropTableIfExists('activities');
}
