import test from 'ava';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { encodedIdSql } from '../../db/sql/encoded-id.sql';
import { ENTITIES } from '../../domain/entities';
import { encodeId } from '../../domain/ids/id-codec';
import { seedReferenceData } from '../../db/seeds/reference-data.seed';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * Behaviour of the migrated schema: the encoded Id column, the version trigger and delete rules,
 * re-runnable reference data. That the schema matches the definitions is schema-drift.test.ts.
 */

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

test('the encoded Id SQL equals the codec for the five types (drift: their columns are this SQL)', async (t) => {
  for (const entity of ENTITIES.filter((e) => e.storesEncodedId)) {
    for (const key of [1, 2, 255, 65536, 12345678, 2147483647]) {
      const { rows } = await knex.raw<{ rows: { id: string }[] }>(
        `select ${encodedIdSql(entity.name, String(key))} as id`,
      );
      t.is(rows[0]!.id, encodeId(entity.name, key), `${entity.name} ${key}`);
    }
  }
});

test('the stored encoded Id column equals the codec', async (t) => {
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
