import test from 'ava';
import pg from 'pg';
import { HAND_LISTS, HAND_PEERS, handKeyed, type Query } from '../../bench/handwritten-floor';
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

test("the peers' filtered scenario (contains, a BuildingType, by name, counted): the same body and count as the service", async (t) => {
  const { rows } = await pool.query<{ bt: number; word: string }>(
    `select building_type_id as bt, split_part(scheme_name, ' ', 1) as word from schemes
      where building_type_id is not null group by 1, 2 order by count(*) desc limit 3`,
  );
  t.is(rows.length, 3);
  let rowsSeen = 0;
  for (const { bt, word } of [...rows, { bt: rows[0]!.bt, word: 'Nomatchatall' }]) {
    for (const [top, skip] of [
      [60, 0],
      [4, 2],
    ] as const) {
      const filter = `contains(SchemeName,'${word}') and BuildingType/Id eq '${encodeId('BuildingType', bt)}'`;
      const query = { $filter: filter, $orderby: 'SchemeName', $top: String(top), $skip: String(skip), $count: 'true' };
      const res = await stack.get(`/Schemes?${new URLSearchParams(query).toString()}`);
      t.is(res.status, 200, res.text);
      const hand = await HAND_PEERS.filtered(pool, word, bt, top, skip);
      t.is(hand.json, res.text, filter);
      t.is(res.headers.get('x-total-count'), String(hand.count));
      rowsSeen += (res.body as unknown[]).length;
    }
  }
  t.true(rowsSeen >= 10, `${rowsSeen} rows`);
});

test("the peers' deep page (nothing expanded): the same body as the service", async (t) => {
  for (const skip of [0, 150, 1490]) {
    const res = await stack.get(`/Schemes?$skip=${skip}&$top=60`);
    t.is(res.status, 200, res.text);
    t.is((await HAND_PEERS.deep(pool, 60, skip)).json, res.text, `skip ${skip}`);
  }
});
