import type { Knex } from 'knex';
import { ENTITIES, OWNED_RECORDS, entityByName, type EntityDefinition, type ScalarField } from '../../domain/entities';
import { encodedIdSql } from '../sql/encoded-id.sql';

/**
 * The entity tables, built from the domain definitions so the schema cannot drift from them at
 * creation time (a schema test checks every field against the live columns). Later changes are
 * explicit migrations of their own.
 */

/** Children deleted with their parent (DESIGN §6); every other foreign key restricts deletes. */
const CASCADES = new Set([
  'scheme_companies.scheme_id',
  'scheme_market_boundaries.scheme_id',
  'investment_companies.investment_event_id',
]);

/** Columns lists are commonly filtered or ordered by (foreign keys are indexed anyway). */
const EXTRA_INDEXES: Record<string, string[][]> = {
  schemes: [['scheme_name'], ['completion_date'], ['created_at']],
  addresses: [['postcode'], ['city']],
  companies: [['name']],
  developments: [['name']],
  markets: [['name']],
  investment_events: [['event_date']],
  occupier_events: [['event_date'], ['lease_expiry_date']],
  portfolios: [['name']],
};

function addScalar(t: Knex.CreateTableBuilder, field: ScalarField): void {
  if (field.readOnly) return; // timestamps are added by addTimestamps
  let col: Knex.ColumnBuilder;
  switch (field.kind) {
    case 'integer':
      col = t.integer(field.column);
      break;
    case 'number':
      col = t.double(field.column);
      break;
    case 'date':
      col = t.date(field.column);
      break;
    case 'datetime':
      col = t.timestamp(field.column, { useTz: true });
      break;
    default:
      col = t.text(field.column);
  }
  if (field.required) col.notNullable();
  if (field.unique) col.unique();
}

function addTimestamps(t: Knex.CreateTableBuilder, knex: Knex): void {
  t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  // Row version: bumped by trigger on every update; the ETag is derived from it.
  t.integer('version').notNullable().defaultTo(1);
}

function tableFor(name: string): string {
  return entityByName(name).table;
}

async function createEntityTable(knex: Knex, entity: EntityDefinition): Promise<void> {
  await knex.schema.createTable(entity.table, (t) => {
    t.increments('id').primary();
    for (const field of Object.values(entity.fields)) addScalar(t, field);
    addTimestamps(t, knex);
  });
  if (entity.storesEncodedId) {
    await knex.raw(
      `alter table ?? add column encoded_id text generated always as (${encodedIdSql(entity.name, 'id')}) stored`,
      [entity.table],
    );
    await knex.raw(`create unique index ?? on ?? (encoded_id)`, [`${entity.table}_encoded_id_unique`, entity.table]);
  }
}

async function addForeignKeys(knex: Knex, entity: EntityDefinition): Promise<void> {
  await knex.schema.alterTable(entity.table, (t) => {
    for (const relation of Object.values(entity.relations)) {
      const col = t.integer(relation.column);
      if (relation.required) col.notNullable();
      const cascade = CASCADES.has(`${entity.table}.${relation.column}`);
      t.foreign(relation.column)
        .references('id')
        .inTable(tableFor(relation.target))
        .onDelete(cascade ? 'CASCADE' : 'RESTRICT');
      t.index([relation.column]);
    }
    for (const cols of EXTRA_INDEXES[entity.table] ?? []) t.index(cols);
  });
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function touch_row() returns trigger language plpgsql as $$
    begin
      new.version := old.version + 1;
      new.updated_at := now();
      return new;
    end $$`);

  for (const entity of ENTITIES) await createEntityTable(knex, entity);
  for (const entity of ENTITIES) await addForeignKeys(knex, entity);

  // Owned collections keep the order they were written in (DESIGN §10): `position` records it.
  for (const entity of ENTITIES.filter((e) => e.keepsWrittenOrder)) {
    await knex.schema.alterTable(entity.table, (t) => {
      t.integer('position').notNullable().defaultTo(0);
    });
  }
  for (const record of OWNED_RECORDS) {
    await knex.schema.createTable(record.table, (t) => {
      t.increments('id').primary();
      t.integer('scheme_id').notNullable().references('id').inTable('schemes').onDelete('CASCADE');
      t.integer('position').notNullable().defaultTo(0);
      for (const field of Object.values(record.fields)) addScalar(t, field);
      t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.index(['scheme_id', 'position']);
    });
  }

  for (const entity of ENTITIES) {
    await knex.raw(`create trigger ?? before update on ?? for each row execute function touch_row()`, [
      `${entity.table}_touch`,
      entity.table,
    ]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const record of [...OWNED_RECORDS].reverse()) await knex.schema.dropTableIfExists(record.table);
  for (const entity of [...ENTITIES].reverse()) await knex.raw('drop table if exists ?? cascade', [entity.table]);
  await knex.raw('drop function if exists touch_row()');
}
