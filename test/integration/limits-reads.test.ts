import test from 'ava';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';
import { TestQueues } from '../support/queues';
import { QUEUE, REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';

/** DESIGN §13 on the read side, with the default limits, over HTTP against the real stack. */

let stack: Stack;
let fx: ReadFixture;
let queues: TestQueues;
/** A scheme with 150 developments, for the default `$top` of an expanded collection. */
let bigScheme: number;
let bigDevelopments: number[];
/** 23 schemes named `Keyset nn`, for keyset paging. */
let keysetIds: number[];

test.before(async () => {
  stack = await startStack();
  fx = await insertReadFixture(stack.knex);
  await stack.knex('companies').insert({ name: 'Plan B Partners' });
  const [big] = (await stack.knex('schemes').insert({ scheme_name: 'Big Scheme' }).returning('id')) as {
    id: number;
  }[];
  bigScheme = big!.id;
  // Inserted in reverse name order, so key order and name order differ.
  const devs = (await stack
    .knex('developments')
    .insert(
      Array.from({ length: 150 }, (_, i) => ({
        name: `Dev ${String(150 - i).padStart(3, '0')}`,
        scheme_id: bigScheme,
      })),
    )
    .returning('id')) as { id: number }[];
  bigDevelopments = devs.map((d) => d.id).sort((a, b) => a - b);
  const keyset = (await stack
    .knex('schemes')
    .insert(Array.from({ length: 23 }, (_, i) => ({ scheme_name: `Keyset ${String(i).padStart(2, '0')}` })))
    .returning('id')) as { id: number }[];
  keysetIds = keyset.map((r) => r.id).sort((a, b) => a - b);
  queues = new TestQueues(stack.config);
  await queues.run(QUEUE.views, REBUILD_VIEWS_JOB, {}, {}, 20_000);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

type Doc = Record<string, unknown>;

const q = (text: string) => encodeURIComponent(text);

function isProblem(t: { is: (a: unknown, b: unknown, m?: string) => void }, res: HttpResult, status: number, m = '') {
  t.is(res.status, status, `${m} ${res.text}`);
  t.is(res.headers.get('content-type')?.split(';')[0], 'application/problem+json', m);
}

function detail(res: HttpResult): string {
  const body = res.body as Doc;
  return String(body.detail ?? JSON.stringify(body));
}

// ---- 1. $expand depth, expansions, default and maximum $top

test('$expand deeper than MAX_EXPAND_DEPTH (3) is a 400, for A/B/C paths and nesting alike', async (t) => {
  for (const expand of [
    'Developments/Scheme/Developments/Scheme',
    'Developments($expand=Scheme($expand=Developments($expand=Scheme)))',
    'Developments/Scheme($expand=Developments/Scheme)',
    'Developments/Scheme/Developments/Scheme/Developments/Scheme/Developments/Scheme/Developments/Scheme',
  ]) {
    const res = await stack.get(`/Schemes/${enc('Scheme', bigScheme)}?$expand=${q(expand)}`);
    isProblem(t, res, 400, expand);
    t.regex(detail(res), /\$expand: depth \d+ exceeds the limit of 3 \(MAX_EXPAND_DEPTH\)/, expand);
  }
  const ok = await stack.get(`/Schemes/${enc('Scheme', fx.schemes[0]!)}?$expand=${q('Developments/Scheme/Address')}`);
  t.is(ok.status, 200, ok.text);
  const dev = ((ok.body as Doc).Developments as Doc[])[0]!;
  t.like(dev.Scheme as Doc, { SchemeName: 'Alpha Tower', Address: { City: 'London' } });
});

test('more than MAX_EXPANSIONS (10) expansions in one request, all levels counted, is a 400', async (t) => {
  const eleven =
    'Address,Country,Market,BuildingType,DevelopmentType,DevelopmentStatus,Companies($expand=Company($expand=Country)),Developments,Notes';
  const res = await stack.get(`/Schemes?$expand=${q(eleven)}`);
  isProblem(t, res, 400);
  t.regex(detail(res), /11 expansions exceed the limit of 10 .*\(MAX_EXPANSIONS\)/);
  const pathForm = 'Address/Country,Companies/Company/Country,Developments/Scheme/Address,Market,Country,Notes';
  t.is((await stack.get(`/Schemes?$expand=${q(pathForm)}`)).status, 400, 'A/B counts two');
  const ten =
    'Address,Country,Market,BuildingType,DevelopmentType,DevelopmentStatus,Companies($expand=Company),Developments,Notes';
  t.is((await stack.get(`/Schemes?$expand=${q(ten)}&$top=2`)).status, 200);
});

test('an expanded collection without $top shows its first MAX_EXPAND_TOP (100) items in key order', async (t) => {
  const key = enc('Scheme', bigScheme);
  const keyed = await stack.get(`/Schemes/${key}?$expand=Developments`);
  t.is(keyed.status, 200);
  const ids = ((keyed.body as Doc).Developments as Doc[]).map((d) => d.Id);
  t.deepEqual(
    ids,
    bigDevelopments.slice(0, 100).map((id) => enc('Development', id)),
  );
  const listed = await stack.get(`/Schemes?$filter=${q(`Id eq '${key}'`)}&$expand=Developments`);
  t.is(((listed.body as Doc[])[0]!.Developments as Doc[]).length, 100);
  // Nested: Developments of each expanded Scheme are capped the same way.
  const nested = await stack.get(
    `/Developments/${enc('Development', bigDevelopments[0]!)}?$expand=${q('Scheme($expand=Developments)')}`,
  );
  t.is((((nested.body as Doc).Scheme as Doc).Developments as Doc[]).length, 100);
  // $skip inside moves the window; an explicit $top up to the limit is honoured.
  const skipped = await stack.get(`/Schemes/${key}?$expand=${q('Developments($skip=120)')}`);
  t.is(((skipped.body as Doc).Developments as Doc[]).length, 30);
  const ordered = await stack.get(`/Schemes/${key}?$expand=${q('Developments($orderby=Name;$top=3)')}`);
  t.deepEqual(
    ((ordered.body as Doc).Developments as Doc[]).map((d) => d.Name),
    ['Dev 001', 'Dev 002', 'Dev 003'],
  );
});

test('a nested $top above MAX_EXPAND_TOP is a 400 naming the limit', async (t) => {
  const res = await stack.get(`/Schemes/${enc('Scheme', bigScheme)}?$expand=${q('Developments($top=101)')}`);
  isProblem(t, res, 400);
  t.regex(detail(res), /\$top=101 inside 'Developments' exceeds the limit of 100 \(MAX_EXPAND_TOP\)/);
  const at = await stack.get(`/Schemes/${enc('Scheme', bigScheme)}?$expand=${q('Developments($top=100)')}`);
  t.is(((at.body as Doc).Developments as Doc[]).length, 100);
});

// ---- 2. syntax nodes

test('$filter, $orderby, $expand and $search over MAX_SYNTAX_NODES (100) are 400s naming the limit', async (t) => {
  const filter = Array.from({ length: 40 }, (_, i) => `TotalUnits eq ${i}`).join(' or ');
  const orderby = Array.from({ length: 101 }, () => 'SchemeName').join(',');
  const expand = `Developments($filter=${Array.from({ length: 40 }, (_, i) => `Units eq ${i}`).join(' or ')})`;
  const search = Array.from({ length: 101 }, (_, i) => `w${i}`).join(' ');
  for (const [option, value] of [
    ['$filter', filter],
    ['$orderby', orderby],
    ['$expand', expand],
    ['$search', search],
  ] as const) {
    const res = await stack.get(`/Schemes?${option}=${q(value)}`);
    isProblem(t, res, 400, option);
    t.regex(
      detail(res),
      new RegExp(`^\\${option}: syntax nodes exceed the limit of 100 \\(MAX_SYNTAX_NODES\\)`),
      option,
    );
  }
  const small = Array.from({ length: 20 }, (_, i) => `TotalUnits eq ${i}`).join(' or ');
  t.is((await stack.get(`/Schemes?$filter=${q(small)}`)).status, 200);
});

// ---- 3. $search prefixes

async function searchNames(route: string, text: string): Promise<string[]> {
  const res = await stack.get(`/${route}?$search=${q(text)}`);
  if (res.status !== 200) throw new Error(`${text}: ${res.status} ${res.text}`);
  return (res.body as Doc[]).map((d) => String(d.Name ?? d.SchemeName)).sort();
}

test('$search: 2+ characters match as a prefix, 1 character only as a whole word, x* needs 2+', async (t) => {
  t.deepEqual(await searchNames('Companies', 'ac'), ['Acme Holdings']);
  t.deepEqual(await searchNames('Companies', 'ac*'), ['Acme Holdings'], 'a trailing * says the same');
  t.deepEqual(await searchNames('Companies', 'a'), [], 'one letter is a whole word');
  t.deepEqual(await searchNames('Companies', 'b'), ['Plan B Partners'], 'not Beta…');
  t.deepEqual(await searchNames('Companies', 'Name:b'), ['Plan B Partners'], 'field terms too');
  t.deepEqual(await searchNames('Companies', 'b OR gam'), ['Gamma Partners', 'Plan B Partners']);
  for (const text of ['a*', 'b*', 'Name:a*', 'x a*', '-b*']) {
    const res = await stack.get(`/Companies?$search=${q(text)}`);
    isProblem(t, res, 400, text);
    t.regex(detail(res), /needs at least 2 characters before '\*'/, text);
  }
});

test('field-restricted $search: AND, OR and NOT over the fields, one grouped scan or one set per term', async (t) => {
  t.deepEqual(await searchNames('Companies', 'Name:gam OR Name:acme'), ['Acme Holdings', 'Gamma Partners']);
  t.deepEqual(await searchNames('Companies', 'Name:partners -Name:gamma'), ['Plan B Partners']);
  t.deepEqual(await searchNames('Companies', 'Name:partners RegistrationNumber:gp9'), ['Gamma Partners']);
  t.deepEqual(await searchNames('Companies', 'Name:acme OR RegistrationNumber:gp9'), [
    'Acme Holdings',
    'Gamma Partners',
  ]);
  t.deepEqual(await searchNames('Companies', '-Name:acme -Name:b'), ['Beta 100% Capital_', 'Gamma Partners']);
  const words = Array.from({ length: 20 }, (_, i) => `Name:zz${i}`).join(' OR ');
  t.deepEqual(await searchNames('Companies', `${words} OR Name:plan`), ['Plan B Partners']);
});

test('$search with a very long word is a 400 or an answer, never a 5xx', async (t) => {
  for (const text of [
    'a'.repeat(3000),
    `Name:${'b'.repeat(3000)}`,
    `"${'c'.repeat(2100)} d"`,
    `${'é'.repeat(1100)}*`,
  ]) {
    const res = await stack.get(`/Companies?$search=${q(text)}`);
    t.true(res.status === 200 || res.status === 400, `${res.status} ${res.text.slice(0, 200)}`);
  }
});

test('$search of 20 OR-ed words is answered (one tsquery)', async (t) => {
  const words = ['acme', 'beta', 'gamma', 'plan', ...Array.from({ length: 16 }, (_, i) => `zz${i}`)];
  t.deepEqual(await searchNames('Companies', words.join(' OR ')), [
    'Acme Holdings',
    'Beta 100% Capital_',
    'Gamma Partners',
    'Plan B Partners',
  ]);
});

// ---- 4. $skip and keyset paging

test('$skip beyond MAX_SKIP (100000) is a 400 pointing at keyset paging', async (t) => {
  const res = await stack.get('/Schemes?$skip=100001');
  isProblem(t, res, 400);
  t.regex(detail(res), /\$skip: 100001 exceeds the limit of 100000 \(MAX_SKIP\).*\$filter=Id gt '/);
  t.is((await stack.get('/Schemes?$skip=100000')).status, 200);
  const huge = await stack.get('/Schemes?$skip=99999999999999999999');
  t.regex(detail(huge), /\$skip: 100000000000000000000 exceeds the limit of 100000 \(MAX_SKIP\)/);
  t.regex(detail(await stack.get('/Schemes?$top=1001')), /\$top: 1001 exceeds the limit of 1000 \(MAX_TOP\)/);
  const nested = await stack.get(`/Schemes?$expand=${q('Developments($skip=100001)')}`);
  isProblem(t, nested, 400, 'nested');
  t.regex(detail(nested), /MAX_SKIP/);
});

test('keyset paging: Id gt the last Id of a page walks through every row in key order', async (t) => {
  const all = keysetIds.map((id) => enc('Scheme', id));
  const seen: string[] = [];
  let last: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const filter = `startswith(SchemeName,'Keyset')${last ? ` and Id gt '${last}'` : ''}`;
    const res = await stack.get(`/Schemes?$filter=${q(filter)}&$top=5`);
    t.is(res.status, 200, res.text);
    const ids = (res.body as Doc[]).map((d) => d.Id as string);
    if (ids.length === 0) break;
    seen.push(...ids);
    last = ids[ids.length - 1];
  }
  t.deepEqual(seen, all);
  const mid = all[10]!;
  const ids = async (filter: string) =>
    (
      (await stack.get(`/Schemes?$filter=${q(`startswith(SchemeName,'Keyset') and ${filter}`)}&$top=100`)).body as Doc[]
    ).map((d) => d.Id);
  t.deepEqual(await ids(`Id ge '${mid}'`), all.slice(10));
  t.deepEqual(await ids(`Id lt '${mid}'`), all.slice(0, 10));
  t.deepEqual(await ids(`Id le '${mid}'`), all.slice(0, 11));
  t.deepEqual(await ids(`'${mid}' gt Id`), all.slice(0, 10), 'literal first');
  // Schemes accept bare integer keys (spec 2.3): they compare the same way.
  t.deepEqual(await ids(`Id gt ${keysetIds[20]}`), all.slice(21));
  const bad = await stack.get(`/Schemes?$filter=${q("Id gt 'not-an-id'")}`);
  isProblem(t, bad, 400);
});

// ---- 5. names are own properties of the definitions

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

test('prototype names are unknown fields everywhere: 400, never 500', async (t) => {
  for (const name of PROTOTYPE_NAMES) {
    const cases = [
      `$filter=${q(`${name} eq 'x'`)}`,
      `$filter=${q(`Address/${name} eq 'x'`)}`,
      `$filter=${q(`Address/Country/${name} eq 1`)}`,
      `$filter=${q(`${name}/Id eq 'x'`)}`,
      `$filter=${q(`${name}/any(c: true)`)}`,
      `$filter=${q(`Companies/any(c: c/${name} eq 1)`)}`,
      `$filter=${q(`Companies/any(c: c/Company/${name} eq 1)`)}`,
      `$orderby=${q(name)}`,
      `$orderby=${q(`Address/${name} desc`)}`,
      `$expand=${q(name)}`,
      `$expand=${q(`Address/${name}`)}`,
      `$expand=${q(`Companies($filter=${name} eq 1)`)}`,
      `$expand=${q(`Companies($orderby=${name})`)}`,
      `$search=${q(`${name}:x`)}`,
      `$search=x&searchFields=${q(name)}`,
    ];
    for (const query of cases) {
      const res = await stack.get(`/Schemes?${query}`);
      isProblem(t, res, 400, query);
    }
    const keyed = await stack.get(`/Schemes/${enc('Scheme', fx.schemes[0]!)}?$expand=${q(name)}`);
    isProblem(t, keyed, 400, `keyed ${name}`);
    t.is((await stack.get(`/Schemes?$select=${q(name)}`)).status, 200, '$select is ignored');
    t.is((await stack.get(`/${name}`)).status, 404);
  }
});

// ---- 6. literals

test('text with U+0000 in any option is a 400 naming the option', async (t) => {
  for (const query of [
    `$filter=${q("SchemeName eq 'a\u0000b'")}`,
    `$filter=${q("contains(SchemeName,'\u0000')")}`,
    `$orderby=${q('SchemeName\u0000')}`,
    `$search=${q('a\u0000b')}`,
    `$search=x&searchFields=${q('SchemeName\u0000')}`,
    `$expand=${q("Companies($filter=Role eq '\u0000')")}`,
    `$select=${q('\u0000')}`,
  ]) {
    const res = await stack.get(`/Schemes?${query}`);
    isProblem(t, res, 400, query);
    const option = query.slice(0, query.indexOf('='));
    t.true(detail(res).includes(query.includes('searchFields') ? 'searchFields' : option), `${query}: ${detail(res)}`);
    t.false(detail(res).includes('\u0000'));
  }
});

test('numbers outside an integer column (32-bit) and dates outside 0001…9999 are 400s', async (t) => {
  for (const filter of [
    'TotalUnits eq 99999999999999999999',
    'TotalUnits eq 1e300',
    'TotalUnits gt 2147483648',
    'TotalUnits lt -2147483649',
    'TotalUnits in (1, 1e300)',
    'length(SchemeName) eq 99999999999999999999',
    'year(CompletionDate) eq 1e300',
    'Developments/any(d: d/Units eq 99999999999999999999)',
    'CompletionDate eq 0000-01-01',
    'CompletionDate eq 10000-01-01',
    'CompletionDate gt 2024-02-30',
    'CreatedAt gt 0000-12-31T23:00:00Z',
  ]) {
    const res = await stack.get(`/Schemes?$filter=${q(filter)}`);
    isProblem(t, res, 400, filter);
    t.regex(detail(res), /^\$filter: /, filter);
  }
  for (const filter of [
    'TotalUnits eq 2147483647',
    'TotalUnits gt -2147483648',
    'TotalFloorArea lt 1e300',
    'CompletionDate ge 0001-01-01',
    'CompletionDate le 9999-12-31',
    'CreatedAt gt 0001-01-01T00:00:00+01:00',
    'CreatedAt lt 9999-12-31T23:59:59-05:00',
    'Id eq 99999999999999999999',
  ]) {
    const res = await stack.get(`/Schemes?$filter=${q(filter)}`);
    t.is(res.status, 200, `${filter}: ${res.text}`);
  }
});

// ---- 9. ETags of expanded reads and If-None-Match

test('the ETag of a read with $expand covers the expanded rows', async (t) => {
  const path = `/Schemes/${enc('Scheme', fx.schemes[1]!)}?$expand=Address`;
  const first = await stack.get(path);
  const etag = first.headers.get('etag')!;
  t.truthy(etag);
  t.is((await stack.get(path, { 'if-none-match': etag })).status, 304);
  await stack
    .knex('addresses')
    .where({ id: fx.addresses[1] })
    .update({ city: 'Cork', version: stack.knex.raw('version + 1') });
  const second = await stack.get(path, { 'if-none-match': etag });
  t.is(second.status, 200, 'the expanded Address changed');
  t.like((second.body as Doc).Address as Doc, { City: 'Cork' });
  t.not(second.headers.get('etag'), etag);
  // Without $expand the ETag stays the row version, as If-Match on writes compares it.
  const plain = await stack.get(`/Schemes/${enc('Scheme', fx.schemes[1]!)}`);
  t.regex(plain.headers.get('etag')!, /^"\d+"$/);
});

test('If-None-Match takes *, lists and weak tags (RFC 9110)', async (t) => {
  const path = `/Schemes/${enc('Scheme', fx.schemes[0]!)}`;
  const etag = (await stack.get(path)).headers.get('etag')!;
  for (const header of ['*', etag, `"nope", ${etag}`, `W/${etag}`, `"a","b" , W/${etag}`]) {
    const res = await stack.get(path, { 'if-none-match': header });
    t.is(res.status, 304, header);
    t.is(res.headers.get('etag'), etag, header);
  }
  for (const header of ['"nope"', `"nope", W/"0"`, '']) {
    t.is((await stack.get(path, { 'if-none-match': header })).status, 200, header);
  }
  const missing = await stack.get(`/Schemes/${enc('Scheme', 999_999)}`, { 'if-none-match': '*' });
  t.is(missing.status, 404, '* matches only an existing representation');
});
