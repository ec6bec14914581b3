import type { Knex } from 'knex';

/**
 * The whole-entity search documents (every searchable field of a row in one weighted tsvector,
 * what a `$search` naming no field matches) move out of `search_fields` into a table of their own
 * (issue 27). In the shared table they sat among every per-field document of every entity type
 * (14.5M rows at 1.1M schemes, one GIN over all): a count or bitmap of a common word there made the
 * planner prefer a parallel scan of the whole table (1.2–2.8 s), against 20–65 ms over the Scheme
 * documents alone.
 *
 * One partial GIN per searchable entity type, so a probe reads only that type's postings and the
 * planner's estimate of how common a word is comes from that type's documents. The list is written
 * out literally (a migration never changes once released); test/integration/read-indexes checks it
 * against the definitions.
 */

const SEARCHABLE_TYPES = [
  'Scheme',
  'Address',
  'Company',
  'BuildingType',
  'Development',
  'DevelopmentType',
  'DevelopmentStatus',
  'Market',
  'Country',
  'Portfolio',
];

/** The field name the whole documents had in `search_fields`. */
const WHOLE = '*';

const indexName = (type: string) => `search_documents_${type.toLowerCase()}_gin`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('search_documents', (t) => {
    t.text('entity_type').notNullable();
    t.integer('entity_key').notNullable();
    t.specificType('document', 'tsvector').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['entity_type', 'entity_key']);
  });
  // Filled before its indexes exist (one sorted build each, not 1M+ insertions into a GIN), in
  // key order so a type's documents sit together.
  await knex.raw(
    `insert into search_documents (entity_type, entity_key, document, updated_at)
     select entity_type, entity_key, document, updated_at from search_fields where field = ?
     order by entity_type, entity_key`,
    [WHOLE],
  );
  await knex.raw('delete from search_fields where field = ?', [WHOLE]);
  for (const type of SEARCHABLE_TYPES) {
    await knex.raw(`create index ?? on search_documents using gin (document) where entity_type = '${type}'`, [
      indexName(type),
    ]);
  }
  await knex.raw(
    'alter table search_documents set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)',
  );
  // The planner's estimates for the probes come from these statistics: gather them now, not at
  // autovacuum's next visit.
  await knex.raw('analyze search_documents');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `insert into search_fields (entity_type, entity_key, field, document, updated_at)
     select entity_type, entity_key, ?, document, updated_at from search_documents
     on conflict (entity_type, entity_key, field) do nothing`,
    [WHOLE],
  );
  await knex.schema.dropTable('search_documents');
}
