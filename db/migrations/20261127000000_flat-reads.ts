import type { Knex } from 'knex';

/**
 * Reads whose cost follows the page, not the table (issue 27), written out literally: a migration
 * never changes once released (test/integration/read-indexes checks these lists against the
 * definitions).
 *
 * - Trigram indexes (pg_trgm, PostgreSQL contrib; trusted, so the database owner may create it):
 *   `contains`/`startswith`/`endswith` with a literal compile to `LIKE` with a bound pattern, which
 *   a `gin_trgm_ops` index answers (a bitmap of the rows holding the pattern's trigrams, rechecked)
 *   instead of a scan of the table. One per string field an entity offers to `$search` directly.
 * - Ordering indexes `(column, id)`: `$orderby=X` adds the key as tie-breaker in X's direction
 *   (db/query/entity-scope.ts orderSql), so a forward scan serves `asc` and a backward scan `desc`
 *   (nulls last and first, Postgres' defaults) without sorting. Where a `(column)` index existed it
 *   is replaced, so existing tables keep their number of indexes; Schemes gains TotalUnits,
 *   TotalFloorArea and UpdatedAt, so every one of its scalar fields is ordered from an index.
 * - Autovacuum after 1 % of a table has changed or been inserted (not 20 %): an index-only scan,
 *   such as a whole-set `$count`, visits the heap for every page not marked all-visible.
 */

const TRIGRAM_INDEXED: [string, string][] = [
  ['schemes', 'scheme_name'],
  ['addresses', 'address_line'],
  ['addresses', 'city'],
  ['addresses', 'postcode'],
  ['companies', 'name'],
  ['companies', 'registration_number'],
  ['building_types', 'name'],
  ['developments', 'name'],
  ['development_types', 'name'],
  ['development_statuses', 'name'],
  ['markets', 'name'],
  ['countries', 'name'],
  ['portfolios', 'name'],
];

/** `(column)` indexes of the first release that become `(column, id)`. */
const REPLACED: [string, string][] = [
  ['schemes', 'scheme_name'],
  ['schemes', 'completion_date'],
  ['schemes', 'created_at'],
  ['addresses', 'postcode'],
  ['addresses', 'city'],
  ['companies', 'name'],
  ['developments', 'name'],
  ['portfolios', 'name'],
  ['markets', 'name'],
  ['investment_events', 'event_date'],
  ['occupier_events', 'event_date'],
  ['occupier_events', 'lease_expiry_date'],
];

/** New `(column, id)` indexes. */
const ADDED: [string, string][] = [
  ['schemes', 'total_units'],
  ['schemes', 'total_floor_area'],
  ['schemes', 'updated_at'],
];

const FREQUENTLY_VACUUMED = ['schemes', 'addresses', 'companies', 'developments', 'search_fields'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  for (const [table, column] of TRIGRAM_INDEXED) {
    await knex.raw('create index ?? on ?? using gin (?? gin_trgm_ops)', [`${table}_${column}_trgm`, table, column]);
  }
  for (const [table, column] of REPLACED) await knex.raw('drop index ??', [`${table}_${column}_index`]);
  for (const [table, column] of [...REPLACED, ...ADDED]) {
    await knex.raw('create index ?? on ?? (??, id)', [`${table}_${column}_id_index`, table, column]);
  }
  for (const table of FREQUENTLY_VACUUMED) {
    await knex.raw(
      'alter table ?? set (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)',
      [table],
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of FREQUENTLY_VACUUMED) {
    await knex.raw('alter table ?? reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_scale_factor)', [
      table,
    ]);
  }
  for (const [table, column] of [...REPLACED, ...ADDED]) {
    await knex.raw('drop index ??', [`${table}_${column}_id_index`]);
  }
  for (const [table, column] of REPLACED) {
    await knex.raw('create index ?? on ?? (??)', [`${table}_${column}_index`, table, column]);
  }
  for (const [table, column] of TRIGRAM_INDEXED) await knex.raw('drop index ??', [`${table}_${column}_trgm`]);
  // pg_trgm stays: another schema object may use it by now.
}
