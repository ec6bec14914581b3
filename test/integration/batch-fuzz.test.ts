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
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);

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
const requests = fc
  .tuple(fc.array(request, { maxLength: 8 }), fc.boolean())
  .map(([list, keep]) => (keep ? list : list.map((r, i) => ({ ...r, id: IDS[i] ?? `r${i}` }))));

const batchBody = fc.oneof(
  { arbitrary: requests.map((list) => JSON.stringify({ requests: list })), weight: 6 },
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
  if (res.status !== 200) return res.status === 202 ? undefined : `batch answered ${res.status}`;
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
    { seed: SEED, numRuns: RUNS },
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
