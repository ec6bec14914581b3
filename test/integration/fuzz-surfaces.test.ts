import test from 'ava';
import fc from 'fast-check';
import { startStack, type HttpResult, type Stack } from '../support/stack';

/**
 * Every other input surface under fast-check (DESIGN §13: zero 5xx from input): random methods on
 * /Jobs, /Roles, /Export, /Commands, Bull Board's API and unknown paths, with random path segments
 * (percent-encoded garbage, NUL, surrogates, dot segments), query strings, Accept / Content-Type
 * headers and bodies. Never a 5xx; every 4xx a problem+json (Bull Board's own API excepted: it
 * answers its 4xx in its own JSON shape); nothing internal in any body; healthy afterwards.
 */

const SEED = 20261123;
const RUNS = Number(process.env.FUZZ_RUNS ?? 600);

let stack: Stack;
test.before(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
});
test.after.always(async () => {
  await stack?.close();
});

/** What no body may show: stack frames, file paths, SQL, library names. */
const LEAK =
  /\bat [\w.<>]+ \(|\.(?:js|ts):\d+|node_modules|\/work\/|\bselect\b.+\bfrom\b|\binsert into\b|\bknex\b|node-postgres|bullmq|ioredis|objection|ajv\b|TypeError|ReferenceError|SyntaxError|undefined/i;

const segment = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '..',
    '.',
    '%00',
    '%ZZ',
    '%',
    '%ud800',
    '%ED%A0%80',
    '__proto__',
    'constructor',
    '-1',
    '0',
    '99999999999999999999',
  ),
  fc.string({ unit: 'grapheme', maxLength: 6 }).map(encodeURIComponent),
  fc.integer().map(String),
);

const queueName = fc.constantFrom('commands', 'views', 'notifications', 'maintenance', 'webhooks', 'nope', '__proto__');

const path = fc.oneof(
  fc.tuple(fc.constantFrom('/Jobs', '/Jobs/RebuildViews'), fc.constant('')).map(([p]) => p),
  fc.tuple(queueName, segment).map(([q, id]) => `/Jobs/${q}/${id}`),
  fc.tuple(queueName, segment).map(([q, id]) => `/Jobs/${q}/${id}/retry`),
  fc.constantFrom('/Roles', '/Roles/Available', '/Roles/Assignments'),
  segment.map((id) => `/Roles/Assignments/${id}`),
  fc.oneof(fc.constantFrom('Schemes', 'Companies', 'Activities', 'Countries'), segment).map((r) => `/Export/${r}`),
  segment.map((id) => `/Commands/${id}`),
  fc.tuple(queueName, segment).map(([q, id]) => `/admin/queues/api/queues/${q}/${id}`),
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
);

const queryValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('-1', '0', '1e300', 'NaN', 'failed', 'waiting', 'true', "Name eq 'x'", "Name eq '\u0000'", '%00'),
);
const queryName = fc.constantFrom(
  'queue',
  'state',
  '$top',
  '$skip',
  '$count',
  '$filter',
  '$orderby',
  '$search',
  '$select',
  '$expand',
  'searchFields',
  'subject',
  'role',
  '__proto__',
  'constructor',
  'access_token',
);
const query = fc
  .array(fc.tuple(queryName, queryValue), { maxLength: 4 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : ''));

const body = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom(
    '{"Subject":"alice","Role":"User"}',
    '{"Subject":"\\u0000","Role":"Admin"}',
    '{"__proto__":{"x":1}}',
    '{',
    '[]',
  ),
);

const headerValue = fc.oneof(
  fc.constantFrom('application/json', 'text/csv', 'application/x-ndjson', '*/*', 'text/html', 'application/xml', ''),
  fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
  path,
  query,
  body,
  accept: headerValue,
  contentType: headerValue,
});

type FuzzRequest = {
  method: string;
  path: string;
  query: string;
  body: string | undefined;
  accept: string;
  contentType: string;
};

async function send(r: FuzzRequest): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (r.accept) headers.accept = r.accept;
  if (r.contentType) headers['content-type'] = r.contentType;
  const init: { headers: Record<string, string>; raw?: string } = { headers };
  if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') init.raw = r.body;
  return stack.request(r.method, `${r.path}${r.query}`, init);
}

test('no request on the other surfaces gets a 5xx, a non-problem 4xx or a leak', async (t) => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const res = await send(r);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `${r.method} ${r.path}${r.query} → ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status >= 500) throw new Error(`5xx: ${where}`);
      const bullBoardApi = r.path.startsWith('/admin/queues/api/');
      if (res.status >= 400 && r.method !== 'HEAD' && !bullBoardApi) {
        if (!/^application\/problem\+json/.test(res.headers.get('content-type') ?? '')) {
          throw new Error(`4xx without problem+json: ${where}`);
        }
      }
      if (res.status >= 400 && LEAK.test(res.text)) throw new Error(`leak: ${where}`);
    }),
    { seed: SEED, numRuns: RUNS },
  );
  t.log(`${RUNS} requests (seed ${SEED}); statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  t.is((await stack.get('/health/ready')).status, 200);
  const created = await stack.request('POST', '/Companies', { body: { Name: 'Still serving' } });
  t.is(created.status, 201, created.text);
});
