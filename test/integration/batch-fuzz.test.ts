import test from 'ava';
import fc from 'fast-check';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { create } from '../support/writes';
import type { BatchResponse } from '../support/batch';

/**
 * `POST /$batch` under fast-check (DESIGN §12, §13: zero 5xx from input): arbitrary JSON and
 * non-JSON bodies, and arbitrary request arrays — ids duplicated, missing or of the wrong type,
 * any method, urls to every kind of route and `$<id>` reference, atomicity groups, dependsOn,
 * headers and bodies with `$<id>` references anywhere. Never a 5xx for the batch or for any request
 * in it; every 4xx a problem+json; nothing internal (stack frames, SQL, library names) in any
 * problem; the service still answers a batch afterwards.
 */

const SEED = 20261123;
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

let stack: Stack;
let companyId: string;
let schemeId: string;
test.before(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  companyId = await create(stack, 'Companies', { Name: 'Batch fuzz company' });
  schemeId = await create(stack, 'Schemes', { SchemeName: 'Batch fuzz scheme', Notes: [{ Text: 'n' }] });
});
test.after.always(async () => {
  await stack?.close();
});

const LEAK =
  /\bat [\w.<>]+ \(|\.(?:js|ts):\d+|node_modules|\/work\/|\bselect\b.+\bfrom\b|\binsert into\b|\bknex\b|node-postgres|bullmq|ioredis|objection|ajv\b|TypeError|ReferenceError|SyntaxError|undefined/i;

const IDS = ['a', 'b', 'c', 'd', 'e'];

const weighted = <T>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: other, weight: 1 });

const text = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '$', '$a', '$$a', '$nobody', "'; drop table companies;--"),
);

const ref = fc.oneof(
  fc.constantFrom(...IDS).map((id) => `$${id}`),
  fc.constantFrom('$', '$$a', '$nobody', '$a?x', 'a'),
);

/** Values of bodies, with `$<id>` references where relations go and anywhere else. */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    ref,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    ref.map((Id) => ({ Id })),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom('Name', 'SchemeName', 'AddressLine', 'Address', 'Companies', 'Company', 'Id', 'Role', 'Notes'),
        fc.constantFrom('__proto__', 'constructor', 'requests', 'op', 'path', 'value'),
        text,
      ),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

const patchOp = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), text),
    path: fc.oneof(
      fc.constantFrom('/Name', '/SchemeName', '/Address', '/Address/Id', '/Companies/-', '/Notes/0', '/Tags/-', ''),
      text,
    ),
    value,
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  fc.constant(undefined),
  value,
  fc.array(patchOp, { maxLength: 4 }),
  fc.constantFrom(
    { Name: 'Fuzz batch co' },
    { SchemeName: 'Fuzz batch scheme', Address: { Id: '$a' }, Companies: [{ Company: { Id: '$b' }, Role: 'x' }] },
    { AddressLine: 'Fuzz line' },
  ),
);

const url = fc.oneof(
  fc.constantFrom(
    'Companies',
    'Schemes',
    'Addresses',
    'Activities',
    'Countries/$count',
    '/Companies',
    'Companies?$count=true&$top=2',
    "Companies?$filter=Name eq 'x'",
    'Companies?$filter=Name eq',
    'Schemes?$expand=Companies&$select=SchemeName',
    'Jobs',
    'Roles/Assignments',
    'Export/Schemes',
    'Commands/00000000-0000-0000-0000-000000000000',
    '$batch',
    'admin/queues',
    '../Companies',
    'http://example.com/Companies',
    '//Companies',
    'Companies/%00',
    '',
    '/',
  ),
  fc.constant(null).map(() => `Companies/${companyId}`),
  fc.constant(null).map(() => `Schemes/${schemeId}`),
  ref,
  ref.map((r) => `${r}?$select=Name`),
  text,
);

const headers = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(
    fc.constantFrom('Content-Type', 'content-type', 'Prefer', 'If-Match', 'if-none-match', 'X-Other', '__proto__'),
    weighted<unknown>(
      fc.constantFrom(
        'application/json',
        'application/json-patch+json',
        'text/plain',
        'return=representation',
        '"1"',
        '*',
        'W/"1"',
      ),
      fc.oneof(text, fc.integer(), fc.constant(null), fc.constant({})),
    ),
    { maxKeys: 3 },
  ),
);

const request = fc.record(
  {
    id: weighted<unknown>(fc.constantFrom(...IDS), fc.oneof(fc.integer(), fc.constant(null), text)),
    method: weighted<unknown>(
      fc.constantFrom('GET', 'POST', 'POST', 'PATCH', 'PUT', 'DELETE'),
      fc.oneof(fc.constantFrom('HEAD', 'OPTIONS', 'get', 'TRACE', 'CONNECT'), text, fc.integer()),
    ),
    url: weighted<unknown>(url, fc.oneof(fc.integer(), fc.constant(null), fc.constant({}))),
    atomicityGroup: weighted<unknown>(fc.constantFrom('g1', 'g2'), fc.oneof(fc.integer(), text, fc.constant(null))),
    dependsOn: weighted<unknown>(
      fc.subarray([...IDS, 'g1', 'g2']),
      fc.oneof(text, fc.array(fc.integer(), { maxLength: 2 }), fc.constant(null)),
    ),
    headers,
    body,
  },
  { requiredKeys: [] },
);

/** Mostly ids unique in request order (so more batches get past the checks), sometimes as drawn. */
/** Wild request arrays: ids mostly unique in request order, sometimes as drawn. */
const wildRequests = fc
  .tuple(fc.array(request, { maxLength: 8 }), fc.boolean())
  .map(([list, keep]) => (keep ? list : list.map((r, i) => ({ ...r, id: IDS[i] ?? `r${i}` }))));

/** Bodies a write of each route could take, with references to earlier requests (`$0`…`$9`). */
const entityBody = fc.oneof(
  fc.record({ Name: text }),
  fc.record({ AddressLine: text, City: fc.option(text) }),
  fc.record(
    {
      SchemeName: text,
      TotalUnits: fc.oneof(fc.integer(), fc.double()),
      Address: fc.nat(9).map((n) => ({ Id: `$${n}` })),
      Companies: fc.array(
        fc.record({ Company: fc.nat(9).map((n) => ({ Id: `$${n}` })), Role: text }, { requiredKeys: [] }),
        { maxLength: 2 },
      ),
      Tags: fc.array(fc.record({ Name: text }), { maxLength: 2 }),
    },
    { requiredKeys: ['SchemeName'] },
  ),
  fc.array(
    fc.record({
      op: fc.constantFrom('add', 'replace', 'remove', 'test'),
      path: fc.constantFrom('/Name', '/SchemeName', '/Address/Id', '/Address', '/Companies/-', '/Tags/-', '/Nope'),
      value: fc.oneof(
        text,
        fc.nat(9).map((n) => `$${n}`),
        fc.nat(9).map((n) => ({ Id: `$${n}` })),
      ),
    }),
    { maxLength: 3 },
  ),
  body,
);

const step = fc.record({
  method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'POST', 'PATCH', 'PUT', 'DELETE'),
  route: fc.constantFrom('Companies', 'Companies', 'Schemes', 'Schemes', 'Addresses', 'Activities', 'Nothings', 'Jobs'),
  target: fc.constantFrom('collection', 'collection', 'key', 'reference', 'reference', 'garbage', '$count'),
  query: fc.constantFrom(
    '',
    '',
    '?$top=2',
    '?$count=true',
    "?$filter=Name eq 'x'",
    '?$filter=bad(',
    '?$expand=Companies',
  ),
  sensible: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  grouped: fc.boolean(),
  extraDependsOn: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
  headers: fc.option(
    fc.dictionary(
      fc.constantFrom('Content-Type', 'content-type', 'Prefer', 'If-Match', 'if-none-match', 'X-Other'),
      fc.oneof(
        fc.constantFrom('application/json', 'application/json-patch+json', 'return=representation', '"1"', '*'),
        fc.string({ maxLength: 12 }),
      ),
      { maxKeys: 2 },
    ),
    { nil: undefined },
  ),
  body: entityBody,
  valid: fc.option(
    fc.record({
      Companies: fc.record({ Name: fc.string({ minLength: 1, maxLength: 12 }) }),
      Addresses: fc.record({ AddressLine: fc.string({ minLength: 1, maxLength: 12 }) }),
      Schemes: fc.record(
        {
          SchemeName: fc.string({ minLength: 1, maxLength: 12 }),
          Address: fc.constant({ Id: '$' }),
          Companies: fc.constant([{ Company: { Id: '$' }, Role: 'Developer' }]),
        },
        { requiredKeys: ['SchemeName'] },
      ),
    }),
    { nil: undefined, freq: 2 },
  ),
  pick: fc.nat(),
});

/**
 * Batches that mostly pass the batch's own checks: ids `r0`, `r1`…, contiguous groups, `$<id>`
 * references (in urls and bodies) to earlier POSTs, each named in dependsOn; the requests
 * themselves still anything from right to wrong.
 */
const wellFormedRequests = fc.array(step, { maxLength: 8 }).map((steps) => {
  const posts: number[] = [];
  let group = 0;
  return steps.map((s, i) => {
    const referenced = new Set<number>();
    const refer = (n: number) => {
      if (posts.length === 0) return undefined;
      const index = posts[n % posts.length]!;
      referenced.add(index);
      return `$r${index}`;
    };
    const key = s.route === 'Schemes' ? schemeId : companyId;
    // Mostly the target a method takes (POST a collection, the others an entity), sometimes not.
    const usual = s.method === 'POST' ? 'collection' : s.method === 'GET' ? s.target : 'reference';
    const target = s.sensible ? usual : s.target;
    let url: string = s.route;
    if (target === 'key') url = `${s.route}/${key}`;
    if (target === 'garbage') url = `${s.route}/garbage`;
    if (target === '$count') url = `${s.route}/$count`;
    if (target === 'reference') url = refer(s.pick) ?? `${s.route}/${key}`;
    if (s.method === 'GET') url += s.query;
    const chosen = s.valid && s.route in s.valid ? s.valid[s.route as keyof typeof s.valid] : s.body;
    const withRefs = JSON.parse(
      JSON.stringify(chosen ?? null, (_, v: unknown) =>
        typeof v === 'string' && v.startsWith('$') ? (refer(v.length + s.pick) ?? companyId) : v,
      ),
    ) as unknown;
    if (!s.grouped || i === 0 || !steps[i - 1]!.grouped) group++;
    const request: Record<string, unknown> = { id: `r${i}`, method: s.method, url };
    if (s.grouped) request.atomicityGroup = `g${group}`;
    const dependsOn = [...referenced].map((n) => `r${n}`);
    if (s.extraDependsOn && i > 0) dependsOn.push(`r${s.pick % i}`);
    if (dependsOn.length) request.dependsOn = [...new Set(dependsOn)];
    if (s.headers) request.headers = s.headers;
    if (chosen !== undefined && s.method !== 'GET' && s.method !== 'DELETE') request.body = withRefs;
    if (s.method === 'POST') posts.push(i);
    return request;
  });
});

const batchBody = fc.oneof(
  { arbitrary: wellFormedRequests.map((list) => JSON.stringify({ requests: list })), weight: 6 },
  { arbitrary: wildRequests.map((list) => JSON.stringify({ requests: list })), weight: 3 },
  { arbitrary: fc.json({ maxDepth: 3 }), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      '',
      '{',
      '{"requests":',
      '{"requests":[{"id":"a","method":"GET","url":"Companies"}',
      '{"requests":[],"__proto__":{"requests":[1]}}',
      '{"requests":' + '['.repeat(2000) + ']'.repeat(2000) + '}',
      '{"requests":[{"id":"a\\u0000","method":"GET","url":"Companies"}]}',
      '{"requests":[{"id":"\\ud800","method":"POST","url":"Companies","body":{"Name":"\\udfff"}}]}',
    ),
    weight: 1,
  },
);

function problemIssue(status: number, contentType: string, problem: unknown, text: string): string | undefined {
  if (status >= 500) return '5xx';
  if (status < 400) return undefined;
  if (!/^application\/problem\+json/.test(contentType)) return `${status} without problem+json (${contentType})`;
  const p = problem as { type?: unknown; title?: unknown; status?: unknown } | undefined;
  if (!p || p.type !== 'about:blank' || typeof p.title !== 'string' || p.status !== status)
    return `${status} with a body that is not its problem`;
  if (LEAK.test(text)) return 'leak';
  return undefined;
}

function check(res: HttpResult, sent: string): string | undefined {
  const top = problemIssue(res.status, res.headers.get('content-type') ?? '', res.body, res.text);
  if (top) return `batch: ${top}`;
  if (res.status >= 400 || res.status === 202) return undefined;
  if (res.status !== 200) return `batch answered ${res.status}`;
  const responses = (res.body as { responses?: BatchResponse[] } | undefined)?.responses;
  if (!Array.isArray(responses)) return 'a 200 without a responses array';
  const requests = (JSON.parse(sent) as { requests?: { id: unknown }[] }).requests;
  if (!Array.isArray(requests)) return 'a 200 for a body without a requests array';
  if (responses.length !== requests.length) return `${responses.length} responses to ${requests.length} requests`;
  for (const [i, r] of responses.entries()) {
    if (r.id !== requests[i]!.id) return `responses[${i}] is '${String(r.id)}', not '${String(requests[i]!.id)}'`;
    if (typeof r.status !== 'number') return `responses[${i}] has no status`;
    const contentType = Object.entries(r.headers ?? {}).find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
    const issue = problemIssue(r.status, contentType, r.body, JSON.stringify(r.body ?? null));
    if (issue) return `responses[${i}] (${r.id}): ${issue}`;
  }
  return undefined;
}

test('no batch gets a 5xx, for itself or any request in it, a non-problem 4xx or a leak', async (t) => {
  const statuses = new Map<string, number>();
  let ran = 0;
  await fc.assert(
    fc.asyncProperty(batchBody, async (raw) => {
      const res = await stack.request('POST', '/$batch', { raw, headers: { 'content-type': 'application/json' } });
      const inner = ((res.body as { responses?: BatchResponse[] } | undefined)?.responses ?? []).map((r) => r.status);
      const key = `${res.status}${inner.length ? `:${[...new Set(inner)].sort().join('/')}` : ''}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (inner.some((status) => status < 300)) ran++;
      const issue = check(res, raw);
      if (issue) throw new Error(`${issue}\nsent ${raw.slice(0, 1500)}\ngot ${res.status} ${res.text.slice(0, 1500)}`);
    }),
    { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
  );
  const seen = [...statuses].sort((a, b) => b[1] - a[1]);
  t.log(`${RUNS} batches (seed ${SEED}); status:inner statuses → count: ${JSON.stringify(Object.fromEntries(seen))}`);
  // The property was exercised on batches that ran, not only on refused ones.
  t.true(ran >= RUNS / 10, `${ran} batches ran a request successfully`);
  t.is((await stack.get('/health/ready')).status, 200);
  const after = await stack.request('POST', '/$batch', {
    body: { requests: [{ id: 'x', method: 'POST', url: 'Companies', body: { Name: 'Still batching' } }] },
  });
  t.is(after.status, 200, after.text);
  t.is((after.body as { responses: BatchResponse[] }).responses[0]!.status, 201);
});
