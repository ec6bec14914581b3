import test from 'ava';
import { encodedIdFastSql, encodedIdSql } from '../../db/sql/encoded-id.sql';
import { ENTITIES } from '../../domain/entities';
import { encodeId } from '../../domain/ids/id-codec';
import { seedReferenceData } from '../../db/seeds/reference-data.seed';
import { databasePerFile } from '../support/database-per-file';

/**
 * Behaviour of the migrated schema: the encoded Id column, the version trigger and delete rules,
 * re-runnable reference data. That the schema matches the definitions is schema-drift.test.ts.
 */

const database = databasePerFile(2);

test('the encoded Id SQL equals the codec for the five types (drift: their columns are this SQL)', async (t) => {
  for (const entity of ENTITIES.filter((e) => e.storesEncodedId)) {
    for (const key of [1, 2, 255, 65536, 12345678, 2147483647]) {
      const { rows } = await database.knex.raw<{ rows: { id: string }[] }>(
        `select ${encodedIdSql(entity.name, String(key))} as id`,
      );
      t.is(rows[0]!.id, encodeId(entity.name, key), `${entity.name} ${key}`);
    }
  }
});

test("the export's cheaper encoded Id SQL equals the codec for every type, key range and alphabet", async (t) => {
  // 20,000 keys per type spread over the whole range: every base64url character, '-' and '_' included.
  for (const entity of ENTITIES) {
    const { rows } = await database.knex.raw<{ rows: { key: number; id: string }[] }>(
      `select k as key, ${encodedIdFastSql(entity.name, 'k')} as id
         from (select (g::bigint * 107374 % 2147483648)::int as k from generate_series(0, 19999) g
               union all select 0 union all select 2147483647) keys`,
    );
    const wrong = rows.filter((row) => row.id !== encodeId(entity.name, row.key));
    t.deepEqual(wrong, [], entity.name);
    t.true(rows.some((row) => row.id.includes('-')) && rows.some((row) => row.id.includes('_')), entity.name);
  }
});

test('the stored encoded Id column equals the codec', async (t) => {
  const [row] = (await database.knex('schemes').insert({ scheme_name: 'x' }).returning(['id', 'encoded_id'])) as {
    id: number;
    encoded_id: string;
  }[];
  t.is(row!.encoded_id, encodeId('Scheme', row!.id));
  await database.knex.raw(`select setval('portfolios_id_seq', 2147483646)`);
  const [p] = (await database.knex('portfolios').insert({ name: 'max' }).returning(['id', 'encoded_id'])) as {
    id: number;
    encoded_id: string;
  }[];
  t.is(p!.id, 2147483647);
  t.is(p!.encoded_id, 'URSs5w');
});

test('updates bump the row version and updated_at; deletes cascade only to owned children', async (t) => {
  const [scheme] = (await database.knex('schemes').insert({ scheme_name: 'v' }).returning(['id', 'version'])) as {
    id: number;
    version: number;
  }[];
  await database.knex('schemes').where({ id: scheme!.id }).update({ scheme_name: 'v2' });
  const after = (await database.knex('schemes').where({ id: scheme!.id }).first()) as { version: number };
  t.is(after.version, scheme!.version + 1);
  await database.knex('scheme_notes').insert({ scheme_id: scheme!.id, text: 'n' });
  await database.knex('developments').insert({ scheme_id: scheme!.id, name: 'd' });
  await t.throwsAsync(database.knex('schemes').where({ id: scheme!.id }).delete(), { message: /foreign key/ });
  await database.knex('developments').where({ scheme_id: scheme!.id }).delete();
  await database.knex('schemes').where({ id: scheme!.id }).delete();
  t.is((await database.knex('scheme_notes').where({ scheme_id: scheme!.id })).length, 0);
});

test('reference data seed is safe to re-run', async (t) => {
  const before = (await database.knex('countries').count<{ count: number }[]>('* as count'))[0]!.count;
  await seedReferenceData(database.knex);
  await seedReferenceData(database.knex);
  t.is((await database.knex('countries').count<{ count: number }[]>('* as count'))[0]!.count, before);
  t.true(before >= 5);
  t.true(((await database.knex('markets').count<{ count: number }[]>('* as count'))[0]!.count as number) >= 5);
});
