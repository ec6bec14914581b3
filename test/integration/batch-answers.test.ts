import { DESIGN_BATCH_EXAMPLE } from '../../domain/batch/batch-example';
import test, { type ExecutionContext } from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import {
  answerOf,
  batch,
  batchAnswerOf,
  byId,
  createdId,
  headerOf,
  type Answer,
  type BatchRequest,
} from '../support/batch';
import { JSON_PATCH, REPRESENTATION, create, read, referenceId, waitFor } from '../support/writes';

/**
 * `POST /$batch` (DESIGN §12): the example of the design, and every request in a batch answering
 * exactly what the same request sent alone answers — status, Location, ETag, Preference-Applied,
 * Allow, X-Total-Count, Content-Type, body — for writes, reads, 304s, `$count`, 404, 405, 415 and
 * 400 problems. Writes are compared against a twin entity written alone, Ids aside. And the read
 * budgets of DESIGN §13 (MAX_RESPONSE_BYTES, STATEMENT_TIMEOUT_MS) and the lone 1 MiB body limit
 * hold for a request in a batch as they do alone.
 */

type Doc = Record<string, unknown>;

let stack: Stack;
let gb: string;
/** Small read budgets (DESIGN §13): a response over 4,000 bytes, a statement over 20 ms. */
let small: Stack;
let slow: Stack;
test.before(async () => {
  [stack, small, slow] = await Promise.all([
    startStack(),
    startStack({ workers: [(config) => startCommandWorker(config)], env: { MAX_RESPONSE_BYTES: '4000' } }),
    startStack({ workers: [(config) => startCommandWorker(config)], env: { STATEMENT_TIMEOUT_MS: '20' } }),
  ]);
  gb = await referenceId(stack, 'Country', 'countries', { iso_code: 'GB' });
  await small.knex.raw(`insert into schemes (scheme_name) select 'Filler ' || g from generate_series(1, 60) g`);
  // Enough rows that scanning them with a function per row takes far longer than 20 ms.
  await slow.knex.raw(
    `insert into schemes (scheme_name, total_units) select 'Scheme number ' || g, g from generate_series(1, 300000) g`,
  );
  await slow.knex.raw('analyze schemes');
});
test.after.always(async () => {
  await Promise.allSettled([stack?.close(), small?.close(), slow?.close()]);
});

/** The answer of one request sent alone. */
async function alone(
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  return answerOf(await stack.request(method, path, init));
}

/** The answer of one request sent as a batch of one. */
async function inBatch(request: Omit<BatchRequest, 'id'>): Promise<Answer> {
  const [only] = await batch(stack, [{ id: 'only', ...request }]);
  return batchAnswerOf(only!);
}

/**
 * An answer with the Ids that necessarily differ between a twin written alone and one written in a
 * batch replaced: the given entity Ids (also inside Location and problem details), the Ids of
 * owned items, and the timestamps.
 */
function scrub(answer: Answer, ids: string[]): Answer {
  const text = (s: string) => ids.reduce((out, id) => out.split(id).join('<id>'), s);
  const walk = (value: unknown, inArray: boolean): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map((v) => walk(v, true));
    if (value && typeof value === 'object') {
      const out: Doc = {};
      for (const [k, v] of Object.entries(value)) {
        if (k === 'CreatedAt' || k === 'UpdatedAt') out[k] = '<time>';
        else if (k === 'Id' && inArray) out[k] = '<item>';
        else out[k] = walk(v, false);
      }
      return out;
    }
    return value;
  };
  return walk(answer, false) as Answer;
}

/** Asserts a batch answer is the lone answer, Ids of the two twins aside. */
function sameAnswer(t: ExecutionContext, batched: Answer, lone: Answer, ids: { batched?: string; lone?: string } = {}) {
  t.deepEqual(
    scrub(batched, ids.batched ? [ids.batched] : []),
    scrub(lone, ids.lone ? [ids.lone] : []),
    `batched ${JSON.stringify(batched)}\nalone   ${JSON.stringify(lone)}`,
  );
}

test('the DESIGN §12 example: a group with a $a1 relation, a dependent PATCH on $s1, a GET that sees it', async (t) => {
  const responses = byId(await batch(stack, DESIGN_BATCH_EXAMPLE));
  const a1 = responses.a1!;
  t.is(a1.status, 201, JSON.stringify(a1));
  t.regex(headerOf(a1, 'location') ?? '', /^\/Addresses\/[A-Za-z0-9_-]{6}$/);
  t.is(headerOf(a1, 'etag'), '"1"');
  t.is(a1.body, undefined);
  const address = createdId(a1);

  const s1 = responses.s1!;
  t.is(s1.status, 201, JSON.stringify(s1));
  t.regex(headerOf(s1, 'location') ?? '', /^\/Schemes\/[A-Za-z0-9_-]{6}$/);
  t.is(headerOf(s1, 'preference-applied'), 'return=representation');
  const scheme = createdId(s1);
  t.like(s1.body as Doc, { Id: scheme, SchemeName: 'Mill', Address: { Id: address }, Tags: [] });

  const p1 = responses.p1!;
  t.is(p1.status, 204, JSON.stringify(p1));
  t.is(headerOf(p1, 'etag'), '"2"');
  t.is(p1.body, undefined);

  // The GET saw the PATCH, and answers what the same GET alone answers now.
  const r1 = responses.r1!;
  t.is(r1.status, 200, JSON.stringify(r1));
  const listed = r1.body as Doc[];
  t.is(listed.length, 1);
  t.like(listed[0]!, { Id: scheme, SchemeName: 'Mill', Address: { Id: address } });
  t.deepEqual(
    (listed[0]!.Tags as Doc[]).map((tag) => tag.Name),
    ['mill'],
  );
  sameAnswer(
    t,
    batchAnswerOf(r1),
    await alone('GET', `/Schemes?$filter=${encodeURIComponent("SchemeName eq 'Mill'")}`),
  );

  // And it is all in the database, related as written.
  const row = (await stack.knex('schemes').where({ encoded_id: scheme }).first()) as { id: number; address_id: number };
  t.is(encodeId('Address', row.address_id), address);
  t.deepEqual(await stack.knex('scheme_tags').where({ scheme_id: row.id }).pluck('name'), ['mill']);
  t.like(await read(stack, `/Schemes/${scheme}`), { SchemeName: 'Mill', Address: { Id: address } });
});

test('POST minimal: 201, Location, ETag and no body, as alone', async (t) => {
  const lone = await alone('POST', '/Companies', { body: { Name: 'Twin minimal', Country: { Id: gb } } });
  const batched = await inBatch({
    method: 'POST',
    url: 'Companies',
    body: { Name: 'Twin minimal', Country: { Id: gb } },
  });
  t.is(batched.status, 201);
  t.regex(batched.headers.location ?? '', /^\/Companies\/[A-Za-z0-9_-]{6}$/);
  const loneId = lone.headers.location!.split('/').pop()!;
  const batchedId = batched.headers.location!.split('/').pop()!;
  t.not(batchedId, loneId);
  sameAnswer(t, batched, lone, { batched: batchedId, lone: loneId });
  t.like(await read(stack, `/Companies/${batchedId}`), { Name: 'Twin minimal', Country: { Id: gb } });
});

test('POST with Prefer: return=representation: the entity as a keyed GET shows it, as alone', async (t) => {
  const address = await create(stack, 'Addresses', { AddressLine: 'Twin Street' });
  const body = {
    SchemeName: 'Twin representation',
    TotalUnits: 12,
    CompletionDate: '2028-01-31',
    Address: { Id: address },
    Notes: [{ Text: 'first' }, { Text: 'second' }],
    Tags: [{ Name: 'twin' }],
  };
  const lone = await alone('POST', '/Schemes', { body, headers: REPRESENTATION });
  const batched = await inBatch({ method: 'POST', url: 'Schemes', body, headers: { PREFER: 'return=representation' } });
  t.is(batched.status, 201);
  t.is(batched.headers['preference-applied'], 'return=representation');
  const batchedId = (batched.body as Doc).Id as string;
  sameAnswer(t, batched, lone, { batched: batchedId, lone: (lone.body as Doc).Id as string });
  // The representation is the keyed GET of the new entity.
  t.deepEqual(batched.body, await read(stack, batched.headers.location!));
});

test('PATCH, PATCH with a representation, a stale If-Match and a failed test op: as alone', async (t) => {
  const twin = () => create(stack, 'Companies', { Name: 'Twin patch', RegistrationNumber: 'TP1' });
  const ops = [
    { op: 'replace', path: '/Name', value: 'Twin patched' },
    { op: 'add', path: '/Website', value: 'https://twin.example' },
  ];
  const [loneId, batchedId] = [await twin(), await twin()];
  const ids = { lone: loneId, batched: batchedId };
  const cases: { ops: unknown; headers: Record<string, string> }[] = [
    { ops, headers: { 'if-match': '"1"' } },
    { ops: [{ op: 'replace', path: '/RegistrationNumber', value: 'TP2' }], headers: REPRESENTATION },
    { ops: [{ op: 'replace', path: '/Name', value: 'Never' }], headers: { 'if-match': '"1"' } },
    { ops: [{ op: 'test', path: '/Name', value: 'Not the name' }], headers: {} },
    { ops: [{ op: 'remove', path: '/Nope' }], headers: {} },
  ];
  const statuses: number[] = [];
  for (const c of cases) {
    const lone = await alone('PATCH', `/Companies/${loneId}`, {
      raw: JSON.stringify(c.ops),
      headers: { ...JSON_PATCH, ...c.headers },
    });
    const batched = await inBatch({
      method: 'PATCH',
      url: `Companies/${batchedId}`,
      body: c.ops,
      headers: { 'Content-Type': 'application/json-patch+json', ...c.headers },
    });
    sameAnswer(t, batched, lone, ids);
    statuses.push(batched.status);
  }
  t.deepEqual(statuses, [204, 200, 412, 409, 409]);
  t.like(await read(stack, `/Companies/${batchedId}`), {
    Name: 'Twin patched',
    Website: 'https://twin.example',
    RegistrationNumber: 'TP2',
  });
});

test('PUT, PUT with a representation and an invalid PUT: as alone', async (t) => {
  const twin = () => create(stack, 'Addresses', { AddressLine: 'Twin put', City: 'Leeds' });
  const [loneId, batchedId] = [await twin(), await twin()];
  const cases: { body: unknown; headers: Record<string, string> }[] = [
    { body: { AddressLine: 'Twin put 2', Postcode: 'LS1' }, headers: {} },
    { body: { AddressLine: 'Twin put 3', Country: { Id: gb } }, headers: { ...REPRESENTATION, 'if-match': '"2"' } },
    { body: { City: 'No line' }, headers: {} },
    { body: { AddressLine: 'Stale' }, headers: { 'if-match': '"1"' } },
  ];
  const statuses: number[] = [];
  for (const c of cases) {
    const lone = await alone('PUT', `/Addresses/${loneId}`, { body: c.body, headers: c.headers });
    const batched = await inBatch({ method: 'PUT', url: `/Addresses/${batchedId}`, body: c.body, headers: c.headers });
    sameAnswer(t, batched, lone, { lone: loneId, batched: batchedId });
    statuses.push(batched.status);
  }
  t.deepEqual(statuses, [204, 200, 400, 412]);
  t.like(await read(stack, `/Addresses/${batchedId}`), { AddressLine: 'Twin put 3', City: null, Country: { Id: gb } });
});

test('DELETE, and DELETE of what is gone: as alone', async (t) => {
  const twin = () => create(stack, 'Companies', { Name: 'Twin delete' });
  const [loneId, batchedId] = [await twin(), await twin()];
  for (const expected of [204, 404]) {
    const lone = await alone('DELETE', `/Companies/${loneId}`);
    const batched = await inBatch({ method: 'DELETE', url: `Companies/${batchedId}` });
    t.is(batched.status, expected);
    sameAnswer(t, batched, lone, { lone: loneId, batched: batchedId });
  }
  t.is((await stack.get(`/Companies/${batchedId}`)).status, 404);
});

test('keyed GET with its ETag, If-None-Match 304, $select and $expand: exactly as alone', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Keyed Co' });
  const scheme = await create(stack, 'Schemes', {
    SchemeName: 'Keyed scheme',
    Companies: [{ Company: { Id: company }, Role: 'Developer' }],
  });
  const keyed = await alone('GET', `/Schemes/${scheme}`);
  t.is(keyed.status, 200);
  const etag = keyed.headers.etag!;
  const expandedEtag = (await alone('GET', `/Schemes/${scheme}?$expand=Companies`)).headers.etag!;
  const cases: [string, Record<string, string>][] = [
    [`Schemes/${scheme}`, {}],
    [`/Schemes/${scheme}`, {}],
    [`Schemes/${scheme}`, { 'If-None-Match': etag }],
    [`Schemes/${scheme}`, { 'if-none-match': `W/${etag}, "other"` }],
    [`Schemes/${scheme}`, { 'if-none-match': '"999"' }],
    [`Schemes/${scheme}?$select=SchemeName`, {}],
    [`Schemes/${scheme}?$expand=Companies`, {}],
    [`Schemes/${scheme}?$expand=Companies`, { 'if-none-match': expandedEtag }],
  ];
  const statuses: number[] = [];
  for (const [url, headers] of cases) {
    const batched = await inBatch({ method: 'GET', url, headers });
    t.deepEqual(batched, await alone('GET', url.startsWith('/') ? url : `/${url}`, { headers }), url);
    statuses.push(batched.status);
  }
  t.deepEqual(statuses, [200, 200, 304, 304, 200, 200, 200, 304]);
});

test('lists with $count=true (X-Total-Count), /$count as text and GET Activities: exactly as alone', async (t) => {
  for (const name of ['Listed b', 'Listed a', 'Listed c']) await create(stack, 'Companies', { Name: name });
  const listed = await create(stack, 'Companies', { Name: 'Listed d' });
  await waitFor(async () => (await stack.knex('activities').where({ entity_id: listed }).first()) !== undefined);
  const filter = encodeURIComponent("startswith(Name,'Listed ')");
  const urls = [
    `Companies?$filter=${filter}&$count=true&$orderby=Name desc&$top=2`,
    `Companies?$filter=${filter}&$count=true&$skip=10`,
    `Companies?$filter=${filter}&$select=Name&$orderby=Name`,
    `Companies/$count?$filter=${filter}`,
    `Activities?$filter=${encodeURIComponent(`EntityId eq '${listed}'`)}&$count=true`,
  ];
  for (const url of urls) {
    const batched = await inBatch({ method: 'GET', url });
    const lone = await alone('GET', `/${url}`);
    t.is(lone.status, 200, url);
    t.deepEqual(batched, lone, url);
  }
  const counted = await inBatch({ method: 'GET', url: `Companies/$count?$filter=${filter}` });
  t.is(counted.body, '4');
  t.is(counted.headers['content-type'], 'text/plain');
  const withTotal = await inBatch({ method: 'GET', url: urls[0]! });
  t.is(withTotal.headers['x-total-count'], '4');
  t.deepEqual(
    (withTotal.body as Doc[]).map((d) => d.Name),
    ['Listed d', 'Listed c'],
  );
});

/** Requests that change nothing and fail: each answers its own problem, exactly as alone. */
const FAILING: { what: string; method: string; url: string; headers?: Record<string, string>; body?: unknown }[] = [
  { what: '404 unknown key', method: 'GET', url: `Companies/${encodeId('Company', 987_654)}` },
  { what: '404 undecodable key', method: 'GET', url: 'Companies/!!nope' },
  { what: '404 unknown route', method: 'GET', url: 'Nothings' },
  { what: '404 PATCH of a missing entity', method: 'PATCH', url: `Schemes/${encodeId('Scheme', 987_654)}`, body: [] },
  { what: '405 POST on a read model', method: 'POST', url: 'Activities', body: { EventType: 'x' } },
  { what: '405 DELETE on a read model', method: 'DELETE', url: `Activities/${encodeId('Activity', 1)}` },
  {
    what: '415 POST as text/plain',
    method: 'POST',
    url: 'Companies',
    headers: { 'content-type': 'text/plain' },
    body: 'Name=x',
  },
  {
    what: '415 PATCH as application/json',
    method: 'PATCH',
    url: `Companies/${encodeId('Company', 987_654)}`,
    headers: { 'content-type': 'application/json' },
    body: [],
  },
  { what: '400 required field', method: 'POST', url: 'Schemes', body: {} },
  {
    what: '400 every validation message',
    method: 'POST',
    url: 'Schemes',
    body: {
      SchemeName: 'x'.repeat(301),
      TotalUnits: 1.5,
      CompletionDate: '2024-02-30',
      Address: 'abc',
      Tags: [{ Name: '' }],
      Foo: 1,
    },
  },
  {
    what: '400 PATCH body not an array',
    method: 'PATCH',
    url: `Companies/${encodeId('Company', 987_654)}`,
    body: { op: 'add' },
  },
  { what: '400 bad $top', method: 'GET', url: 'Companies?$top=-1' },
  { what: '404 DELETE of /$count', method: 'DELETE', url: 'Companies/$count' },
  { what: '404 GET of a path too deep', method: 'GET', url: 'Companies/AAAAAA/Name' },
  { what: '400 bad $filter', method: 'GET', url: `Schemes?$filter=${encodeURIComponent('Nope eq 1')}` },
];

/** The same failing request sent alone: the batch's headers as HTTP headers, its body as JSON text. */
function aloneFailing(c: (typeof FAILING)[number]): Promise<Answer> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.body !== undefined) {
    headers['content-type'] ??= c.method === 'PATCH' ? 'application/json-patch+json' : 'application/json';
  }
  const raw = c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
  return alone(c.method, `/${c.url}`, raw === undefined ? { headers } : { headers, raw });
}

for (const c of FAILING) {
  test(`${c.what}: the request's own problem, as alone`, async (t) => {
    const headers =
      c.method === 'PATCH' && !c.headers ? { 'Content-Type': 'application/json-patch+json' } : (c.headers ?? {});
    const batched = await inBatch({ method: c.method, url: c.url, headers, body: c.body });
    const lone = await aloneFailing(c);
    t.true(lone.status >= 400 && lone.status < 500, JSON.stringify(lone));
    t.deepEqual(batched, lone);
  });
}

test('a PATCH with no Content-Type in the batch is a 415, as a PATCH sent as application/json alone', async (t) => {
  const key = encodeId('Company', 987_654);
  const batched = await inBatch({ method: 'PATCH', url: `Companies/${key}`, body: [] });
  t.is(batched.status, 415);
  t.deepEqual(
    batched,
    await alone('PATCH', `/Companies/${key}`, { raw: '[]', headers: { 'content-type': 'application/json' } }),
  );
});

test('all of those in one batch, with reads between them: each answers as alone, in request order', async (t) => {
  const company = await create(stack, 'Companies', { Name: 'Mixed Co' });
  const requests: BatchRequest[] = [];
  const expected: Answer[] = [];
  for (const [i, c] of FAILING.entries()) {
    const headers =
      c.method === 'PATCH' && !c.headers ? { 'Content-Type': 'application/json-patch+json' } : (c.headers ?? {});
    requests.push({ id: `f${i}`, method: c.method, url: c.url, headers, body: c.body });
    expected.push(await aloneFailing(c));
    requests.push({ id: `g${i}`, method: 'GET', url: `Companies/${company}` });
    expected.push(await alone('GET', `/Companies/${company}`));
  }
  const responses = await batch(stack, requests);
  t.deepEqual(responses.map(batchAnswerOf), expected);
});

test('a response over MAX_RESPONSE_BYTES: its own 400, as alone, in and outside a group', async (t) => {
  const lone = answerOf(await small.get('/Schemes?$top=1000'));
  t.is(lone.status, 400);
  const r = byId(
    await batch(small, [
      { id: 'big', method: 'GET', url: 'Schemes?$top=1000' },
      { id: 'ok', method: 'GET', url: 'Schemes?$top=3' },
      { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Budget group' } },
      { id: 'big-in-group', atomicityGroup: 'g', method: 'GET', url: 'Schemes?$top=1000' },
    ]),
  );
  t.deepEqual(batchAnswerOf(r.big!), lone);
  t.is(r.ok!.status, 200);
  t.deepEqual(batchAnswerOf(r['big-in-group']!), lone);
  t.is(r.c1!.status, 424);
  t.is(await small.knex('companies').where({ name: 'Budget group' }).first(), undefined);
});

test('a read past STATEMENT_TIMEOUT_MS: its own 503, as alone; the requests around it still run', async (t) => {
  const filter = encodeURIComponent(`contains(tolower(SchemeName),'zzz') or length(SchemeName) eq 1`);
  const urls = [`Schemes?$filter=${filter}&$count=true`, `Schemes/$count?$filter=${filter}`];
  const lone = await Promise.all(urls.map(async (url) => answerOf(await slow.get(`/${url}`))));
  t.deepEqual(
    lone.map((a) => a.status),
    [503, 503],
  );
  const r = byId(
    await batch(slow, [
      { id: 'before', method: 'POST', url: 'Companies', body: { Name: 'Before the slow read' } },
      { id: 'list', method: 'GET', url: urls[0]! },
      { id: 'count', method: 'GET', url: urls[1]! },
      { id: 'after', method: 'POST', url: 'Companies', body: { Name: 'After the slow read' } },
    ]),
  );
  t.deepEqual(batchAnswerOf(r.list!), lone[0]);
  t.deepEqual(batchAnswerOf(r.count!), lone[1]);
  t.is(r.before!.status, 201);
  t.is(r.after!.status, 201);
  t.is((await slow.get('/health/ready')).status, 200);
});

test('a read past STATEMENT_TIMEOUT_MS inside a group is stopped too: its 503, the group not applied', async (t) => {
  const filter = encodeURIComponent(`contains(tolower(SchemeName),'zzz') or length(SchemeName) eq 1`);
  const url = `Schemes/$count?$filter=${filter}`;
  const lone = answerOf(await slow.get(`/${url}`));
  t.is(lone.status, 503);
  const r = byId(
    await batch(slow, [
      { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Slow group' } },
      { id: 'count', atomicityGroup: 'g', method: 'GET', url },
      { id: 'after', method: 'POST', url: 'Companies', body: { Name: 'After the slow group' } },
    ]),
  );
  t.deepEqual(batchAnswerOf(r.count!), lone);
  t.is(r.c1!.status, 424);
  t.is(r.after!.status, 201);
  t.is(await slow.knex('companies').where({ name: 'Slow group' }).first(), undefined);
});

test('a request body over the 1 MiB a lone request may send: its own 413, as alone; nothing written', async (t) => {
  const body = {
    SchemeName: 'Oversized notes',
    Notes: Array.from({ length: 120 }, (_, i) => ({ Text: `${i} ${'n'.repeat(9990)}` })),
  };
  t.true(JSON.stringify(body).length > 1024 * 1024);
  const lone = await alone('POST', '/Schemes', { body });
  t.is(lone.status, 413);
  const batched = await inBatch({ method: 'POST', url: 'Schemes', body });
  t.deepEqual(batched, lone);
  t.is(await stack.knex('schemes').where({ scheme_name: 'Oversized notes' }).first(), undefined);
});

test('a URL with a trailing slash: as alone (a lone GET or POST on /Companies/ reaches the collection)', async (t) => {
  await create(stack, 'Companies', { Name: 'Slashed' });
  const filter = `?$filter=${encodeURIComponent("Name eq 'Slashed'")}`;
  for (const url of [`Companies/${filter}`, `Companies/$count/${filter}`]) {
    const lone = await alone('GET', `/${url}`);
    t.is(lone.status, 200, url);
    t.deepEqual(await inBatch({ method: 'GET', url }), lone, url);
  }
  const lone = await alone('POST', '/Companies/', { body: { Name: 'Slash posted' } });
  t.is(lone.status, 201);
  const batched = await inBatch({ method: 'POST', url: 'Companies/', body: { Name: 'Slash posted' } });
  sameAnswer(t, batched, lone, {
    lone: lone.headers.location!.split('/').pop()!,
    batched: batched.headers.location?.split('/').pop() ?? 'none',
  });
});

test('the whole batch response within MAX_RESPONSE_BYTES: reads past what is left answer 400 naming it', async (t) => {
  // Each read alone is under the limit; ten of them are not (commit a24201a: "the whole response
  // within MAX_RESPONSE_BYTES, each read gets what earlier answers left").
  const url = 'Schemes?$top=8&$orderby=SchemeName';
  const lone = answerOf(await small.get(`/${url}`));
  t.is(lone.status, 200);
  const bytes = (a: Answer) => Buffer.byteLength(JSON.stringify(a.body));
  t.true(bytes(lone) < 4000 && bytes(lone) > 2000, `${bytes(lone)} bytes`);
  const responses = (
    await batch(
      small,
      Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, method: 'GET', url })),
    )
  ).map(batchAnswerOf);
  t.deepEqual(responses[0], lone, 'the first read has the whole budget');
  const answered = responses.filter((r) => r.status === 200);
  const refused = responses.filter((r) => r.status !== 200);
  t.true(
    answered.reduce((sum, r) => sum + bytes(r), 0) <= 4000,
    `${answered.length} reads answered, ${answered.reduce((sum, r) => sum + bytes(r), 0)} bytes`,
  );
  for (const r of refused) {
    t.is(r.status, 400, JSON.stringify(r));
    t.regex(String((r.body as { detail?: string }).detail), /MAX_RESPONSE_BYTES/);
  }
});
