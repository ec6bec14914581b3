import test from 'ava';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { enc, insertReadFixture } from '../support/fixtures';

/**
 * DESIGN §13 budgets of a read, with small settings: MAX_RESPONSE_BYTES checked in Postgres, and
 * STATEMENT_TIMEOUT_MS stopping a slow read (503 + Retry-After) but not an export.
 */

let small: Stack;
let slow: Stack;
let bigScheme: number;

test.before(async () => {
  [small, slow] = await Promise.all([
    startStack({ workers: [], env: { MAX_RESPONSE_BYTES: '4000' } }),
    startStack({ workers: [], env: { STATEMENT_TIMEOUT_MS: '20' } }),
  ]);
  await insertReadFixture(small.knex);
  const [big] = (await small.knex('schemes').insert({ scheme_name: 'Big Scheme' }).returning('id')) as {
    id: number;
  }[];
  bigScheme = big!.id;
  await small
    .knex('developments')
    .insert(Array.from({ length: 60 }, (_, i) => ({ name: `Development number ${i}`, scheme_id: bigScheme })));
  await small.knex.raw(`insert into schemes (scheme_name) select 'Filler ' || g from generate_series(1, 60) g`);
  // Enough rows that scanning them with a function per row takes far longer than 20 ms.
  await slow.knex.raw(
    `insert into schemes (scheme_name, total_units) select 'Scheme number ' || g, g from generate_series(1, 300000) g`,
  );
  await slow.knex.raw('analyze schemes');
});
test.after.always(async () => {
  await Promise.allSettled([small?.close(), slow?.close()]);
});

type Doc = Record<string, unknown>;

function isProblem(t: { is: (a: unknown, b: unknown, m?: string) => void }, res: HttpResult, status: number) {
  t.is(res.status, status, res.text);
  t.is(res.headers.get('content-type')?.split(';')[0], 'application/problem+json');
}

test('a response over MAX_RESPONSE_BYTES is a 400 naming the limit, $top and $expand', async (t) => {
  const list = await small.get('/Schemes?$top=1000');
  isProblem(t, list, 400);
  const detail = String((list.body as Doc).detail);
  t.regex(detail, /over the limit of 4000 \(MAX_RESPONSE_BYTES\)/);
  t.regex(detail, /\$top/);
  t.regex(detail, /\$expand/);
  const keyed = await small.get(`/Schemes/${enc('Scheme', bigScheme)}?$expand=Developments`);
  isProblem(t, keyed, 400);
  t.regex(String((keyed.body as Doc).detail), /MAX_RESPONSE_BYTES/);
  // Under the limit the same reads answer.
  t.is((await small.get('/Schemes?$top=3')).status, 200);
  const fewer = await small.get(
    `/Schemes/${enc('Scheme', bigScheme)}?$expand=${encodeURIComponent('Developments($top=3)')}`,
  );
  t.is(fewer.status, 200, fewer.text);
  t.is(((fewer.body as Doc).Developments as Doc[]).length, 3);
});

test('a read running past STATEMENT_TIMEOUT_MS is stopped by Postgres: 503 with Retry-After', async (t) => {
  const filter = encodeURIComponent(`contains(tolower(SchemeName),'zzz') or length(SchemeName) eq 1`);
  for (const path of [`/Schemes?$filter=${filter}&$count=true`, `/Schemes/$count?$filter=${filter}`]) {
    const res = await slow.get(path);
    isProblem(t, res, 503);
    t.truthy(res.headers.get('retry-after'), path);
    t.regex(String((res.body as Doc).detail), /STATEMENT_TIMEOUT_MS/);
  }
  // The connection went back to the pool in a usable state.
  t.is((await slow.get('/health/ready')).status, 200);
});

test('exports are not under the read statement timeout', async (t) => {
  const filter = encodeURIComponent(`contains(tolower(SchemeName),'zzz')`);
  const res = await slow.get(`/Export/Schemes?$filter=${filter}`, { accept: 'text/csv' });
  t.is(res.status, 200, res.text);
  t.is(res.text.trim().split('\n').length, 1, 'the header row only');
});
