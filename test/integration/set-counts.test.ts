import test from 'ava';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { ENTITIES } from '../../domain/entities';
import { startStack, type Stack } from '../support/stack';
import { create, waitFor } from '../support/writes';
import { batch } from '../support/batch';

/**
 * Issue 27: `$count` costs the same at any size. A whole set's count comes from `table_counts`,
 * kept by statement triggers in the writer's transaction (exact in every snapshot); a filtered or
 * searched count stops at COUNT_LIMIT (here 5) or SEARCH_COUNT_LIMIT (3) and says so with `X-Total-Count-Limit-Exceeded`.
 */

const COUNT_LIMIT = 5;
const SEARCH_COUNT_LIMIT = 3;
let stack: Stack;

test.before(async () => {
  stack = await startStack({
    env: { COUNT_LIMIT: String(COUNT_LIMIT), SEARCH_COUNT_LIMIT: String(SEARCH_COUNT_LIMIT) },
  });
});
test.after.always(async () => {
  await stack?.close();
});

async function kept(knex: Knex, table: string): Promise<number> {
  const { rows } = (await knex.raw('select coalesce(sum(n), 0)::int as n from table_counts where table_name = ?', [
    table,
  ])) as { rows: { n: number }[] };
  return rows[0]!.n;
}

async function counted(knex: Knex, table: string): Promise<number> {
  const row = (await knex(table).count<{ n: string }[]>('* as n'))[0]!;
  return Number(row.n);
}

test.serial('every entity table has its count kept, equal to count(*)', async (t) => {
  await stack.knex('companies').insert([{ name: 'Counted A' }, { name: 'Counted B' }]);
  for (const entity of ENTITIES) {
    t.is(await kept(stack.knex, entity.table), await counted(stack.knex, entity.table), entity.table);
  }
});

test.serial('inserts and deletes on many connections at once, rolled back or not, keep the count exact', async (t) => {
  const table = 'markets';
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ add: fc.integer({ min: 0, max: 40 }), remove: fc.nat(10), rollback: fc.boolean() }), {
        minLength: 1,
        maxLength: 6,
      }),
      async (steps) => {
        // Each step in its own transaction, all at once: they take different pool connections.
        await Promise.all(
          steps.map((step, i) =>
            stack.knex
              .transaction(async (trx) => {
                if (step.add > 0) {
                  await trx(table).insert(Array.from({ length: step.add }, (_, k) => ({ name: `M ${i}.${k}` })));
                }
                await trx.raw(`delete from markets where id in (select id from markets order by random() limit ?)`, [
                  step.remove,
                ]);
                if (step.rollback) throw new Error('rolled back on purpose');
              })
              .catch((error: unknown) => {
                if (!(error instanceof Error && error.message === 'rolled back on purpose')) throw error;
              }),
          ),
        );
        t.is(await kept(stack.knex, table), await counted(stack.knex, table));
      },
    ),
    { numRuns: 25 },
  );
});

test.serial('TRUNCATE clears a table’s count', async (t) => {
  await stack.knex('portfolios').insert([{ name: 'P1' }, { name: 'P2' }]);
  t.true((await kept(stack.knex, 'portfolios')) >= 2);
  await stack.knex.raw('truncate portfolios cascade');
  t.is(await kept(stack.knex, 'portfolios'), 0);
  await stack.knex('portfolios').insert({ name: 'P3' });
  t.is(await kept(stack.knex, 'portfolios'), 1);
});

test.serial('a whole set’s $count is exact past COUNT_LIMIT, at the root, /$count and /odata', async (t) => {
  for (let i = 0; i < COUNT_LIMIT + 3; i++) await create(stack, 'BuildingTypes', { Name: `Kind ${i}` });
  const n = await counted(stack.knex, 'building_types');
  t.true(n > COUNT_LIMIT);
  const page = await stack.get('/BuildingTypes?$count=true&$top=1');
  t.is(page.headers.get('x-total-count'), String(n));
  t.is(page.headers.get('x-total-count-limit-exceeded'), null);
  const plain = await stack.get('/BuildingTypes/$count');
  t.is(plain.text, String(n));
  t.is(plain.headers.get('x-total-count-limit-exceeded'), null);
  const odata = await stack.get('/odata/BuildingTypes?$count=true&$top=1');
  t.is((odata.body as { '@odata.count': number })['@odata.count'], n);
  t.is((await stack.get('/odata/BuildingTypes/$count')).text, String(n));
});

test.serial('a filtered $count stops at COUNT_LIMIT and says so; under it, it is exact', async (t) => {
  const add = (name: string) => stack.knex('development_types').insert({ name });
  for (let i = 0; i < COUNT_LIMIT + 2; i++) await add(`Many ${i}`);
  for (let i = 0; i < COUNT_LIMIT - 2; i++) await add(`Few ${i}`);
  const many = encodeURIComponent("startswith(Name,'Many')");
  const few = encodeURIComponent("startswith(Name,'Few')");

  const limited = await stack.get(`/DevelopmentTypes?$filter=${many}&$count=true&$top=2`);
  t.is(limited.status, 200);
  t.is(limited.headers.get('x-total-count'), String(COUNT_LIMIT));
  t.is(limited.headers.get('x-total-count-limit-exceeded'), 'true');
  t.is((limited.body as unknown[]).length, 2, 'the page is not affected');
  const exact = await stack.get(`/DevelopmentTypes?$filter=${few}&$count=true`);
  t.is(exact.headers.get('x-total-count'), String(COUNT_LIMIT - 2));
  t.is(exact.headers.get('x-total-count-limit-exceeded'), null);

  const plain = await stack.get(`/DevelopmentTypes/$count?$filter=${many}`);
  t.is(plain.text, String(COUNT_LIMIT));
  t.is(plain.headers.get('x-total-count-limit-exceeded'), 'true');

  const odata = await stack.get(`/odata/DevelopmentTypes?$filter=${many}&$count=true&$top=1`);
  t.is((odata.body as { '@odata.count': number })['@odata.count'], COUNT_LIMIT);
  t.is(odata.headers.get('x-total-count-limit-exceeded'), 'true');
  t.is((await stack.get(`/odata/DevelopmentTypes/$count?$filter=${few}`)).text, String(COUNT_LIMIT - 2));

  // Exactly at the limit is still exact: the count stops one row past it.
  await add('Few last');
  await add('Few latest');
  const at = await stack.get(`/DevelopmentTypes/$count?$filter=${few}`);
  t.is(at.text, String(COUNT_LIMIT));
  t.is(at.headers.get('x-total-count-limit-exceeded'), null);

  // A batch's reads answer as alone, the header included.
  const [page, count] = await batch(stack, [
    { id: 'p', method: 'GET', url: `DevelopmentTypes?$filter=${many}&$count=true&$top=1` },
    { id: 'c', method: 'GET', url: `DevelopmentTypes/$count?$filter=${many}` },
  ]);
  t.is(page!.headers?.['x-total-count'], String(COUNT_LIMIT));
  t.is(page!.headers?.['x-total-count-limit-exceeded'], 'true');
  t.is(count!.body, String(COUNT_LIMIT));
  t.is(count!.headers?.['x-total-count-limit-exceeded'], 'true');
});

test.serial('a $search count stops at SEARCH_COUNT_LIMIT', async (t) => {
  for (let i = 0; i < SEARCH_COUNT_LIMIT + 1; i++) await create(stack, 'Schemes', { SchemeName: `Quillon ${i}` });
  const res = await waitFor(async () => {
    const r = await stack.get('/Schemes?$search=quillon&$count=true&$top=1');
    return r.headers.get('x-total-count-limit-exceeded') === 'true' ? r : undefined;
  });
  t.is(res.headers.get('x-total-count'), String(SEARCH_COUNT_LIMIT));
  t.is((await stack.get('/Schemes/$count?$search=quillon')).text, String(SEARCH_COUNT_LIMIT));
});
