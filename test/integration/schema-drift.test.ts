import test from 'ava';
import type { Knex } from 'knex';
import {
  ENTITIES,
  OWNED_RECORDS,
  READ_MODELS,
  entityByName,
  type EntityDefinition,
  type OwnedRecordDefinition,
  type ScalarField,
  type ScalarKind,
} from '../../domain/entities';
import { encodedIdSql } from '../../db/sql/encoded-id.sql';
import { databasePerFile } from '../support/database-per-file';

/**
 * Drift: the database the migrations build (npm test migrates an empty template database; this
 * file reads a clone of it) must be exactly what the entity definitions describe: tables, columns,
 * types, nullability, defaults, uniques, foreign keys and version and count triggers. Adding a field to a
 * definition without a migration fails here, and so does a migration that changes a column the
 * definitions do not describe. Each line below is one fact about the schema; a failure lists the
 * lines the definitions expect but the migrations did not build (`missing`) and the lines the
 * migrations built but the definitions do not describe (`unexpected`).
 */

/** Tables the service keeps for itself, described by their migrations alone. */
const SERVICE_TABLES = [
  'command_log',
  'outbox',
  'role_assignments',
  'search_fields',
  'search_documents',
  'table_counts',
  'webhook_subscriptions',
  'webhook_deliveries',
  'knex_migrations',
  'knex_migrations_lock',
];

const COLUMN_TYPES: Record<ScalarKind, string> = {
  string: 'text',
  url: 'text',
  wkt: 'text',
  integer: 'integer',
  number: 'double precision',
  date: 'date',
  datetime: 'timestamp with time zone',
  stringList: 'jsonb',
};

const database = databasePerFile(2);

// ---- what the definitions describe --------------------------------------------------------------

function column(table: string, name: string, type: string, opts: { notNull?: boolean; extra?: string } = {}): string {
  return `${table}.${name} ${type}${opts.notNull ? ' not null' : ''}${opts.extra ? ` ${opts.extra}` : ''}`;
}

const SERVICE_STAMP = 'default CURRENT_TIMESTAMP';

function fieldColumn(table: string, field: ScalarField): string {
  // Read-only fields (CreatedAt, UpdatedAt) are stamped by the database, never written by a client.
  if (field.readOnly)
    return column(table, field.column, COLUMN_TYPES[field.kind], { notNull: true, extra: SERVICE_STAMP });
  return column(table, field.column, COLUMN_TYPES[field.kind], { notNull: field.required });
}

function serialId(table: string): string {
  return column(table, 'id', 'integer', { notNull: true, extra: `default nextval('${table}_id_seq'::regclass)` });
}

function foreignKey(table: string, col: string, target: string, cascade: boolean): string {
  return `${table}: FOREIGN KEY (${col}) REFERENCES ${target}(id) ON DELETE ${cascade ? 'CASCADE' : 'RESTRICT'}`;
}

/** The owned collection that holds rows of `childName` through `column`, if any (its rows cascade). */
function owningCollection(parent: EntityDefinition, childName: string, col: string): boolean {
  return Object.values(parent.collections).some((c) => c.owned && c.target === childName && c.foreignKey === col);
}

/** The owned collection of a record's declared parent: it names the table's parent column. */
function parentColumnOf(record: OwnedRecordDefinition): string {
  const parent = entityByName(record.parent);
  const holders = Object.values(parent.collections).filter((c) => c.owned && c.target === record.name);
  if (holders.length !== 1) throw new Error(`${record.parent} must own exactly one collection of ${record.name}`);
  return holders[0]!.foreignKey;
}

interface Schema {
  tables: string[];
  columns: string[];
  uniques: string[];
  foreignKeys: string[];
  triggers: string[];
}

function describeEntity(entity: EntityDefinition, encodedIdExpr: string | undefined, out: Schema): void {
  const table = entity.table;
  out.tables.push(table);
  out.columns.push(serialId(table));
  out.uniques.push(`${table} primary key (id)`);
  for (const field of Object.values(entity.fields)) {
    out.columns.push(fieldColumn(table, field));
    if (field.unique) out.uniques.push(`${table} unique (${field.column})`);
  }
  // The row version the ETag is made of, bumped by the touch trigger.
  out.columns.push(column(table, 'version', 'integer', { notNull: true, extra: 'default 1' }));
  out.triggers.push(`${table}: ${table}_touch before update, touch_row`);
  // The whole-set count (`$count` with nothing to filter), kept by statement triggers.
  out.triggers.push(
    `${table}: ${table}_count_insert after insert, table_counts_add`,
    `${table}: ${table}_count_delete after delete, table_counts_add`,
    `${table}: ${table}_count_truncate after truncate, table_counts_clear`,
  );
  if (encodedIdExpr !== undefined) {
    out.columns.push(column(table, 'encoded_id', 'text', { extra: `generated always as (${encodedIdExpr})` }));
    out.uniques.push(`${table} unique (encoded_id)`);
  }
  for (const relation of Object.values(entity.relations)) {
    const target = entityByName(relation.target);
    out.columns.push(column(table, relation.column, 'integer', { notNull: relation.required }));
    out.foreignKeys.push(
      foreignKey(table, relation.column, target.table, owningCollection(target, entity.name, relation.column)),
    );
  }
  if (entity.keepsWrittenOrder)
    out.columns.push(column(table, 'position', 'integer', { notNull: true, extra: 'default 0' }));
}

function describeOwnedRecord(record: OwnedRecordDefinition, out: Schema): void {
  const table = record.table;
  const parentColumn = parentColumnOf(record);
  out.tables.push(table);
  out.columns.push(serialId(table));
  out.uniques.push(`${table} primary key (id)`);
  out.columns.push(column(table, parentColumn, 'integer', { notNull: true }));
  out.foreignKeys.push(foreignKey(table, parentColumn, entityByName(record.parent).table, true));
  out.columns.push(column(table, 'position', 'integer', { notNull: true, extra: 'default 0' }));
  for (const field of Object.values(record.fields)) {
    out.columns.push(fieldColumn(table, field));
    if (field.unique) out.uniques.push(`${table} unique (${field.column})`);
  }
  // Stamped by the writer (owned records have no version of their own: their parent's moves).
  for (const stamp of ['created_at', 'updated_at'])
    out.columns.push(column(table, stamp, 'timestamp with time zone', { notNull: true, extra: SERVICE_STAMP }));
}

/** Postgres's own rendering of the encoded Id expression of each type (so formatting cannot differ). */
async function encodedIdExpressions(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await database.knex.transaction(async (trx: Knex.Transaction) => {
    for (const entity of ENTITIES.filter((e) => e.storesEncodedId)) {
      await trx.raw(
        `create temp table drift_probe (id integer, e text generated always as (${encodedIdSql(entity.name, 'id')}) stored) on commit drop`,
      );
      const { rows } = await trx.raw<{ rows: { expr: string }[] }>(
        `select pg_get_expr(d.adbin, d.adrelid) as expr from pg_attrdef d
         join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
         where d.adrelid = 'pg_temp.drift_probe'::regclass and a.attname = 'e'`,
      );
      out.set(entity.name, rows[0]!.expr);
      await trx.raw('drop table drift_probe');
    }
  });
  return out;
}

async function describedSchema(): Promise<Schema> {
  const out: Schema = { tables: [...SERVICE_TABLES], columns: [], uniques: [], foreignKeys: [], triggers: [] };
  const encodedIds = await encodedIdExpressions();
  for (const entity of ENTITIES) describeEntity(entity, encodedIds.get(entity.name), out);
  for (const record of OWNED_RECORDS) describeOwnedRecord(record, out);
  for (const model of READ_MODELS) out.tables.push(model.table);
  return out;
}

// ---- what the migrations built ------------------------------------------------------------------

async function rows<T>(sql: string): Promise<T[]> {
  return ((await database.knex.raw(sql)) as { rows: T[] }).rows;
}

async function migratedSchema(tables: readonly string[]): Promise<Schema> {
  const inPublic = `relnamespace = 'public'::regnamespace and relkind in ('r', 'p')`;
  const only = (table: string) => tables.includes(table);
  const columnRows = await rows<{
    table: string;
    name: string;
    type: string;
    not_null: boolean;
    expr: string | null;
    generated: string;
  }>(`
    select c.relname as table, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
           a.attnotnull as not_null, pg_get_expr(d.adbin, d.adrelid) as expr, a.attgenerated as generated
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where c.${inPublic} and a.attnum > 0 and not a.attisdropped`);
  const uniqueRows = await rows<{ table: string; primary: boolean; columns: string; partial: boolean }>(`
    select c.relname as table, i.indisprimary as primary, i.indpred is not null as partial,
           (select string_agg(a.attname, ', ' order by k.ord)
              from unnest(i.indkey) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum) as columns
    from pg_index i join pg_class c on c.oid = i.indrelid
    where i.indisunique and c.${inPublic}`);
  const foreignKeyRows = await rows<{ table: string; definition: string }>(`
    select c.relname as table, pg_get_constraintdef(con.oid) as definition
    from pg_constraint con join pg_class c on c.oid = con.conrelid
    where con.contype = 'f' and c.${inPublic}`);
  const triggerRows = await rows<{ table: string; name: string; timing: string; fn: string }>(`
    select c.relname as table, t.tgname as name, t.tgfoid::regproc::text as fn,
           case when t.tgtype & 2 = 2 then 'before' else 'after' end ||
           case when t.tgtype & 16 = 16 then ' update' else '' end ||
           case when t.tgtype & 4 = 4 then ' insert' else '' end ||
           case when t.tgtype & 8 = 8 then ' delete' else '' end ||
           case when t.tgtype & 32 = 32 then ' truncate' else '' end as timing
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where not t.tgisinternal and c.${inPublic}`);
  const tableRows = await rows<{ table: string }>(`select relname as table from pg_class where ${inPublic}`);
  return {
    tables: tableRows.map((r) => r.table),
    columns: columnRows
      .filter((r) => only(r.table))
      .map((r) => {
        const extra =
          r.expr === null ? undefined : r.generated === 's' ? `generated always as (${r.expr})` : `default ${r.expr}`;
        return column(r.table, r.name, r.type, { notNull: r.not_null, extra });
      }),
    uniques: uniqueRows
      .filter((r) => only(r.table))
      .map((r) => `${r.table} ${r.primary ? 'primary key' : 'unique'} (${r.columns})${r.partial ? ' partial' : ''}`),
    foreignKeys: foreignKeyRows.filter((r) => only(r.table)).map((r) => `${r.table}: ${r.definition}`),
    triggers: triggerRows.filter((r) => only(r.table)).map((r) => `${r.table}: ${r.name} ${r.timing}, ${r.fn}`),
  };
}

// ---- the comparison -----------------------------------------------------------------------------

function drift(expected: readonly string[], actual: readonly string[]): { missing: string[]; unexpected: string[] } {
  // Two empty lists would agree: a catalog query that finds nothing must not pass for no drift.
  if (expected.length === 0 || actual.length === 0) throw new Error('nothing to compare');
  return {
    missing: expected.filter((line) => !actual.includes(line)).sort(),
    unexpected: actual.filter((line) => !expected.includes(line)).sort(),
  };
}

const NO_DRIFT = { missing: [], unexpected: [] };
const HINT =
  'definitions (domain/entities) and migrations (db/migrations) disagree: add a migration or fix the definition';

/** Tables described field by field: entities and owned records (read models are checked below). */
function describedTables(): string[] {
  return [...ENTITIES.map((e) => e.table), ...OWNED_RECORDS.map((r) => r.table)];
}

test('every table is an entity, an owned record, a read model or a service table', async (t) => {
  const described = await describedSchema();
  const migrated = await migratedSchema([]);
  t.deepEqual(drift(described.tables, migrated.tables), NO_DRIFT, HINT);
});

test('entity and owned-record tables have exactly the columns, types, nullability and defaults described', async (t) => {
  const described = await describedSchema();
  const migrated = await migratedSchema(describedTables());
  t.deepEqual(drift(described.columns, migrated.columns), NO_DRIFT, HINT);
});

test('unique constraints are exactly the primary keys, unique fields and encoded Ids', async (t) => {
  const described = await describedSchema();
  const migrated = await migratedSchema(describedTables());
  t.deepEqual(drift(described.uniques, migrated.uniques), NO_DRIFT, HINT);
});

test('foreign keys are exactly the relations and owned-record parents; only owned items cascade', async (t) => {
  const described = await describedSchema();
  const migrated = await migratedSchema(describedTables());
  t.deepEqual(drift(described.foreignKeys, migrated.foreignKeys), NO_DRIFT, HINT);
});

test('every entity table, and nothing else described, has the version trigger and the count triggers', async (t) => {
  const described = await describedSchema();
  const migrated = await migratedSchema(describedTables());
  t.deepEqual(drift(described.triggers, migrated.triggers), NO_DRIFT, HINT);
});

test('read-model fields have their columns (the rest of the table is the worker’s bookkeeping)', async (t) => {
  const migrated = await migratedSchema(READ_MODELS.map((m) => m.table));
  const bare = migrated.columns.map((line) => line.replace(/ default .*$/, ''));
  const expected = READ_MODELS.flatMap((m) => Object.values(m.fields).map((f) => fieldColumn(m.table, f)));
  t.deepEqual(drift(expected, bare).missing, [], HINT);
});

test('every owned record is held by one owned collection, of its declared parent', (t) => {
  for (const record of OWNED_RECORDS) {
    const holders = ENTITIES.flatMap((e) =>
      Object.values(e.collections)
        .filter((c) => c.owned && c.target === record.name)
        .map(() => e.name),
    );
    t.deepEqual(holders, [record.parent], record.name);
  }
});

test('every foreign key column leads an index (deletes of the parent and joins stay indexed)', async (t) => {
  const unindexed = await rows<{ table: string; column: string }>(`
    select c.relname as table, a.attname as column
    from pg_constraint con
    join pg_class c on c.oid = con.conrelid
    join pg_attribute a on a.attrelid = c.oid and a.attnum = con.conkey[1]
    where con.contype = 'f' and c.relnamespace = 'public'::regnamespace
      and not exists (select 1 from pg_index i where i.indrelid = c.oid and i.indkey[0] = con.conkey[1])`);
  t.deepEqual(unindexed, []);
});
