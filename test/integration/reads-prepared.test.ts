import test from 'ava';
import type pg from 'pg';
import { runStatement } from '../../db/query/prepared-statements';
import { databasePerFile } from '../support/database-per-file';

/**
 * Read statements whose text repeats are prepared once per connection (issue 12), within a bound
 * per connection: what the backend holds is read from `pg_prepared_statements` of that very
 * connection.
 */

const database = databasePerFile(2);

async function withConnection<T>(fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const client = (await database.knex.client.acquireConnection()) as pg.ClientBase;
  try {
    return await fn(client);
  } finally {
    await database.knex.client.releaseConnection(client);
  }
}

const preparedTexts = async (client: pg.ClientBase) =>
  (await client.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map(
    (r) => r.statement,
  );

test.serial('a text runs unnamed the first time and prepared from the second, with the same rows', async (t) => {
  await withConnection(async (client) => {
    const sql = "select ?::int + 1 as n, 'first' as tag";
    t.deepEqual((await runStatement(client, sql, [1])).rows, [{ n: 2, tag: 'first' }]);
    t.deepEqual(await preparedTexts(client), []);
    t.deepEqual((await runStatement(client, sql, [41])).rows, [{ n: 42, tag: 'first' }]);
    t.deepEqual((await runStatement(client, sql, [9])).rows, [{ n: 10, tag: 'first' }]);
    t.true((await preparedTexts(client)).includes("select $1::int + 1 as n, 'first' as tag"));
  });
});

test.serial('a text search is planned for each execution, never prepared (its plan depends on the word)', async (t) => {
  await withConnection(async (client) => {
    const sql = "select count(*)::int as n from (values ('a park'::tsvector)) v(d) where d @@ to_tsquery('simple', ?)";
    for (const word of ['park', 'park', 'helix', 'park']) await runStatement(client, sql, [word]);
    t.deepEqual((await runStatement(client, sql, ['park'])).rows, [{ n: 1 }]);
    t.false(
      (await preparedTexts(client)).some((text) => text.includes('to_tsquery')),
      'no prepared text search',
    );
  });
});

test.serial(
  'each connection holds at most the bound, deallocating the least recently used, which comes back on demand',
  async (t) => {
    await withConnection(async (client) => {
      const sqlOf = (tag: string) => `select ?::int as n, '${tag}' as tag`;
      const run = async (tag: string) => {
        const { rows } = await runStatement(client, sqlOf(tag), [7], 2);
        t.deepEqual(rows, [{ n: 7, tag }]);
      };
      const held = async () =>
        (await preparedTexts(client)).flatMap((text) => /'(\w)' as tag$/.exec(text)?.[1] ?? []).sort();
      // Seen once process-wide first: unnamed.
      for (const tag of ['a', 'b', 'c']) await run(tag);
      t.deepEqual(await held(), []);
      await run('a');
      await run('b');
      t.deepEqual(await held(), ['a', 'b']);
      await run('c');
      t.deepEqual(await held(), ['b', 'c']);
      // The deallocated one is prepared again when it comes back.
      await run('a');
      t.deepEqual(await held(), ['a', 'c']);
      await run('c');
      await run('b');
      t.deepEqual(await held(), ['b', 'c']);
    });
  },
);
