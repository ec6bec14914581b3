import test from 'ava';
import type { Knex } from 'knex';
import { ENTITIES, OWNED_RECORDS } from '../../domain/entities';
import { createKnex } from '../../db/knex';
import { encodeId } from '../../domain/ids/id-codec';
import { seedReferenceData } from '../../db/seeds/reference-data.seed';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
let knex: Knex;
test.before(async () => {
  db = await createTestDatabase();
  knex = createKnex(db.url, 2);
});
test.after.always(async () => {
  await knex?.destroy();
  await db?.drop();
});

async function columns(table: string): Promise<Set<string>> {
  const rows = (await knex('information_schema.columns').where({ table_name: table }).select('column_name')) as {
    column_name: string;
  }[];
  return new Set(rows.map((r) => r.column_name));
}

test('every field and relation of every definition has its column', async (t) => {
  for (const entity of ENTITIES) {
    const cols = await columns(entity.table);
    t.true(cols.size > 0, `table ${entity.table}`);
    for (const col of ['id', 'created_at', 'updated_at', 'version']) t.true(cols.has(col), `${entity.table}.${col}`);
    for (const field of Object.values(entity.fields)) t.true(cols.has(field.column), `${entity.table}.${field.column}`);
    for (const rel of Object.values(entity.relations)) t.true(cols.has(rel.column), `${entity.table}.${rel.column}`);
    if (entity.keepsWrittenOrder) t.true(cols.has('position'), `${entity.table}.position`);
    t.is(cols.has('encoded_id'), entity.storesEncodedId, `${entity.table}.encoded_id`);
  }
  for (const record of OWNED_RECORDS) {
    const cols = await columns(record.table);
    for (const field of Object.values(record.fields)) t.true(cols.has(field.column), `${record.table}.${field.column}`);
  }
});

test('every foreign key column is the leading column of an index', async (t) => {
  const rows = (await knex.raw(`
    select t.relname as table, a.attname as column
    from pg_index i
    join pg_class t on t.oid = i.indrelid
    join pg_attribute a on a.attrelid = t.oid and a.attnum = i.indkey[0]
    where t.relnamespace = 'public'::regnamespace`)) as { rows: { table: string; column: string }[] };
  const indexed = new Set(rows.rows.map((r) => `${r.table}.${r.column}`));
  for (const entity of ENTITIES) {
    for (const rel of Object.values(entity.relations))
      t.true(indexed.has(`${entity.table}.${rel.column}`), `${entity.table}.${rel.column}`);
  }
  for (const record of OWNED_RECORDS) t.true(indexed.has(`${record.table}.scheme_id`), record.table);
});

test('the stored encoded Id column equals the codec for the five tables', async (t) => {
  const [row] = (await knex('schemes').insert({ scheme_name: 'x' }).returning(['id', 'encoded_id'])) as {
    id: number;
    encoded_id: string;
  }[];
  t.is(row!.encoded_id, encodeId('Scheme', row!.id));
  await knex.raw(`select setval('portfolios_id_seq', 2147483646)`);
  const [p] = (await knex('portfolios').insert({ name: 'max' }).returning(['id', 'encoded_id'])) as {
    id: number;
    encoded_id: string;
  }[];
  t.is(p!.id, 2147483647);
  t.is(p!.encoded_id, 'URSs5w');
});

test('updates bump the row version and updated_at; deletes cascade only to owned children', async (t) => {
  const [scheme] = (await knex('schemes').insert({ scheme_name: 'v' }).returning(['id', 'version'])) as {
    id: number;
    version: number;
  }[];
  await knex('schemes').where({ id: scheme!.id }).update({ scheme_name: 'v2' });
  const after = (await knex('schemes').where({ id: scheme!.id }).first()) as { version: number };
  t.is(after.version, scheme!.version + 1);
  await knex('scheme_notes').insert({ scheme_id: scheme!.id, text: 'n' });
  await knex('developments').insert({ scheme_id: scheme!.id, name: 'd' });
  await t.throwsAsync(knex('schemes').where({ id: scheme!.id }).delete(), { message: /foreign key/ });
  await knex('developments').where({ scheme_id: scheme!.id }).delete();
  await knex('schemes').where({ id: scheme!.id }).delete();
  t.is((await knex('scheme_notes').where({ scheme_id: scheme!.id })).length, 0);
});

test('reference data seed is safe to re-run', async (t) => {
  const before = (await knex('countries').count<{ count: number }[]>('* as count'))[0]!.count;
  await seedReferenceData(knex);
  await seedReferenceData(knex);
  t.is((await knex('countries').count<{ count: number }[]>('* as count'))[0]!.count, before);
  t.true(before >= 5);
  t.true(((await knex('markets').count<{ count: number }[]>('* as count'))[0]!.count as number) >= 5);
});
