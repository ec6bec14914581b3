import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';

let stack: Stack;
let fx: ReadFixture;
let extraIds: number[];
test.before(async () => {
  stack = await startStack({ workers: [], env: { MAX_TOP: '100' } });
  fx = await insertReadFixture(stack.knex);
  // 70 companies more, so the default page size (60) is visible.
  const rows = Array.from({ length: 70 }, (_, i) => ({ name: `Filler ${String(i).padStart(2, '0')}` }));
  extraIds = ((await stack.knex('companies').insert(rows).returning('id')) as { id: number }[]).map((r) => r.id);
});
test.after.always(async () => {
  await stack?.close();
});

type Doc = Record<string, unknown>;
const names = (body: unknown) => (body as Doc[]).map((d) => d.Name ?? d.SchemeName);

test('default order is the primary key and the default page is 60 rows', async (t) => {
  const res = await stack.get('/Companies');
  t.is(res.status, 200);
  const docs = res.body as Doc[];
  t.is(docs.length, 60);
  const all = [...fx.companies, ...extraIds].sort((a, b) => a - b);
  t.deepEqual(
    docs.map((d) => d.Id),
    all.slice(0, 60).map((id) => enc('Company', id)),
  );
  t.is(res.headers.get('x-total-count'), null, 'counted only when asked');
});

test('$top and $skip cut after ordering; a $skip past the end is an empty page', async (t) => {
  const res = await stack.get('/Companies?$orderby=Name desc&$top=3&$skip=1');
  // 'Gamma Partners' sorts first descending; $skip=1 passes it.
  t.deepEqual(names(res.body), ['Filler 69', 'Filler 68', 'Filler 67']);
  const empty = await stack.get('/Companies?$skip=5000');
  t.deepEqual(empty.body, []);
  const zero = await stack.get('/Companies?$top=0&$count=true');
  t.deepEqual(zero.body, []);
  t.is(zero.headers.get('x-total-count'), '73');
});

test('$top above MAX_TOP, negative or non-numeric values are 400 problems', async (t) => {
  for (const q of ['$top=101', '$top=-1', '$top=abc', '$skip=-5', '$skip=1.5', '$count=yes']) {
    const res = await stack.get(`/Companies?${q}`);
    t.is(res.status, 400, q);
    t.like(res.body as Doc, { type: 'about:blank', title: 'Bad Request', status: 400 });
    t.regex((res.body as Doc).detail as string, /\$(top|skip|count)/, q);
  }
  t.is((await stack.get('/Companies?$top=100')).status, 200);
});

test('$count=true adds X-Total-Count over the filter, and /$count answers the number', async (t) => {
  const res = await stack.get(`/Companies?$count=true&$filter=startswith(Name,'Filler 1')&$top=2`);
  t.is(res.headers.get('x-total-count'), '10');
  t.is((res.body as Doc[]).length, 2);
  const count = await stack.get(`/Companies/$count?$filter=startswith(Name,'Filler')`);
  t.is(count.status, 200);
  t.is(count.text, '70');
});

test('$select is accepted and ignored; unknown $ options are refused', async (t) => {
  const withSelect = await stack.get(`/Schemes?$select=SchemeName&$top=1`);
  t.is(withSelect.status, 200);
  t.true('TotalUnits' in (withSelect.body as Doc[])[0]!);
  const unknown = await stack.get('/Schemes?$frobnicate=1');
  t.is(unknown.status, 400);
  t.regex((unknown.body as Doc).detail as string, /\$frobnicate/);
  t.is((await stack.get('/Schemes?someParam=1')).status, 200, 'plain parameters are not OData options');
});

test("$orderby takes several keys, navigation paths and breaks ties by key, in the last key's direction", async (t) => {
  const res = await stack.get('/Schemes?$orderby=Address/City desc,SchemeName');
  // Nulls sort first on descending order (Postgres default, index-friendly); text compares by code
  // point, so 'london' > 'London' > 'Dublin'.
  t.deepEqual(names(res.body), ['Gamma Works', "x'; DROP TABLE schemes;--", 'Alpha Tower', 'Beta Yard']);
  const ties = await stack.get('/SchemeCompanies?$orderby=Role');
  const roles = (ties.body as Doc[]).map((d) => d.Role);
  t.deepEqual(roles, ['Developer', 'Developer', 'Investor', 'Lender']);
  // The two 'Developer' rows tie on Role: the key decides, ascending.
  const tied = (ties.body as Doc[]).slice(0, 2).map((d) => (d.Scheme as Doc).Id);
  t.deepEqual(tied, [enc('Scheme', fx.schemes[0]!), enc('Scheme', fx.schemes[1]!)]);
  // Descending, the key breaks the tie descending too: a `(Role, id)` index read backwards.
  const descending = await stack.get('/SchemeCompanies?$orderby=Role desc');
  const tiedDesc = (descending.body as Doc[]).slice(2).map((d) => (d.Scheme as Doc).Id);
  t.deepEqual(tiedDesc, [enc('Scheme', fx.schemes[1]!), enc('Scheme', fx.schemes[0]!)]);
  const bad = await stack.get('/Schemes?$orderby=Nope asc');
  t.is(bad.status, 400);
  t.regex((bad.body as Doc).detail as string, /unknown property 'Nope' of Scheme at position 0/);
});

test('collection reads show the reduced boundary form; $expand=MarketBoundaries gives the full one', async (t) => {
  const list = await stack.get('/Schemes?$top=1');
  const boundary = ((list.body as Doc[])[0]!.MarketBoundaries as Doc[])[0]!;
  t.deepEqual(Object.keys(boundary).sort(), ['Id', 'Market']);
  const expanded = await stack.get('/Schemes?$top=1&$expand=MarketBoundaries');
  t.truthy((((expanded.body as Doc[])[0]!.MarketBoundaries as Doc[])[0] as Doc).Geometry);
});

test('$expand naming Notes, Tags or ExternalLinks changes nothing', async (t) => {
  const plain = await stack.get('/Schemes');
  const expanded = await stack.get('/Schemes?$expand=Notes,Tags,ExternalLinks');
  t.is(expanded.status, 200);
  t.deepEqual(expanded.body, plain.body);
});

test('unknown entity routes are 404 problems', async (t) => {
  const res = await stack.get('/Widgets');
  t.is(res.status, 404);
  t.like(res.body as Doc, { title: 'Not Found' });
});
