import test from 'ava';
import pg from 'pg';
import { HAND_LISTS, handKeyed, type Query } from '../../bench/handwritten-floor';
import { READ_SCENARIOS } from '../../bench/scenarios';
import { generateData } from '../../db/seeds/generated-data.seed';
import { rebuildAllDocuments } from '../../db/search/search-indexer';
import { encodeId } from '../../domain/ids/id-codec';
import { startStack, type Stack } from '../support/stack';

/**
 * The benchmark's hand-written read floor (bench/handwritten-floor.ts) is only a floor if it
 * answers with the service's very bytes: every read scenario, several keys and pages, on a small
 * generated data set (notes, tags, links, boundaries, companies, search documents).
 */

let stack: Stack;
let pool: pg.Pool;
test.before(async () => {
  stack = await startStack({ workers: [] });
  await generateData(stack.knex, { schemes: 1500, seed: 7 });
  await rebuildAllDocuments(stack.knex, async () => {});
  pool = new pg.Pool({ connectionString: stack.directDatabaseUrl, max: 4 });
});
test.after.always(async () => {
  await pool?.end();
  await stack?.close();
});

test('keyed reads: the same body and ETag as the service, for schemes with and without each collection', async (t) => {
  const { rows } = await pool.query<{ id: number }>(
    `(select scheme_id as id from scheme_market_boundaries limit 2)
     union (select scheme_id from scheme_external_links limit 2)
     union (select id from schemes where id not in (select scheme_id from scheme_notes) limit 2)
     union (select id from schemes where address_id is null or market_id is null limit 2)
     union (select id from schemes order by id limit 3)`,
  );
  t.true(rows.length >= 6);
  for (const { id } of rows) {
    const res = await stack.get(`/Schemes/${encodeId('Scheme', id)}`);
    const hand = await handKeyed(pool, id);
    t.is(res.status, 200);
    t.is(hand?.json, res.text, `scheme ${id}`);
    t.is(res.headers.get('etag'), `"${hand?.version}"`);
  }
  t.is(await handKeyed(pool, 999_999), null);
});

const PAGES: { $top?: string; $skip?: string }[] = [{}, { $top: '7', $skip: '3' }, { $top: '5', $skip: '40' }];

for (const scenario of READ_SCENARIOS.filter((s) => s.query)) {
  test(`list scenario '${scenario.name}': the same body and count as the service on several pages`, async (t) => {
    const read = HAND_LISTS[scenario.name];
    if (!read) return t.fail(`no hand-written read for '${scenario.name}'`);
    let rowsSeen = 0;
    for (const page of PAGES) {
      // The deep scenario's own $skip is past this small data set: its pages start at 150.
      const deep = scenario.query!.$skip ? { $skip: String(150 + Number(page.$skip ?? 0)) } : {};
      const query: Query = { ...scenario.query!, ...page, ...deep };
      const res = await stack.get(`/Schemes?${new URLSearchParams(query).toString()}`);
      t.is(res.status, 200, res.text);
      const hand = await read(pool, query);
      t.is(hand.json, res.text, JSON.stringify(query));
      t.is(hand.count === undefined ? null : String(hand.count), res.headers.get('x-total-count'));
      rowsSeen += (res.body as unknown[]).length;
    }
    // Pages of rows, not just empty arrays, were compared.
    t.true(rowsSeen >= 5, `${rowsSeen} rows`);
  });
}
