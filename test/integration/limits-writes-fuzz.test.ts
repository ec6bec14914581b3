import test from 'ava';
import fc from 'fast-check';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { create } from '../support/writes';

/**
 * The write surfaces under fast-check (DESIGN §13: zero 5xx from input): POST and PUT bodies
 * (wrong types, out-of-range numbers, NUL, lone surrogates, deep nesting, unknown and
 * prototype-named members), JSON Patch documents (random operations, paths and values) and the
 * headers writes read (Content-Type, Prefer, If-Match, Idempotency-Key). Never a 5xx; every 4xx a
 * problem+json; nothing internal in any body; the service still writes afterwards.
 */

const SEED = 20261123;
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let stack: Stack;
let schemeId: string;
let companyId: string;
test.before(async () => {
  stack = await startStack();
  schemeId = await create(stack, 'Schemes', {
    SchemeName: 'Fuzz target',
    Notes: [{ Text: 'n' }],
    Tags: [{ Name: 't' }],
  });
  companyId = await create(stack, 'Companies', { Name: 'Fuzz company' });
});
test.after.always(async () => {
  await stack?.close();
});

const LEAK =
  /\bat [\w.<>]+ \(|\.(?:js|ts):\d+|node_modules|\/work\/|\bselect\b.+\bfrom\b|\binsert into\b|\bknex\b|node-postgres|bullmq|ioredis|objection|TypeError|ReferenceError|undefined/i;

/** Strings a column cannot hold, mixed with ordinary ones. */
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00',
    '\ud83d\ude00',
    '',
    ' ',
    '=1+1',
    "'; drop table schemes;--",
  ),
);
const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(2147483647, 2147483648, -2147483649, 1e300, -0, 0.5, Number.MAX_SAFE_INTEGER + 2),
);
const memberName = fc.oneof(
  fc.constantFrom(
    'SchemeName',
    'TotalUnits',
    'TotalFloorArea',
    'CompletionDate',
    'Address',
    'Notes',
    'Tags',
    'Companies',
    'Name',
    'Website',
    'Id',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
  ),
  text,
);
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('2024-02-30', '0000-01-01', '9999-12-31', '10000-01-01', 'http://x', 'POINT(1 2)'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(memberName, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text, sometimes with escapes JSON.stringify would never write, sometimes very deep. */
const body = fc.oneof(
  fc.dictionary(memberName, value, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  value.map((v) => JSON.stringify(v) ?? 'null'),
  fc.constantFrom(
    '{"SchemeName":"a\\u0000"}',
    '{"SchemeName":"\\ud800"}',
    '{"Name":"\\udfff\\ud800"}',
    '{"TotalFloorArea":1e400}',
    '{"SchemeName":"x","__proto__":{"SchemeName":"y"}}',
    '{"SchemeName":"x","Notes":' + '['.repeat(3000) + ']'.repeat(3000) + '}',
    '{"SchemeName":"x"',
    '',
  ),
);

const pointer = fc.oneof(
  fc.constantFrom('', '/', '/SchemeName', '/Notes', '/Notes/-', '/Notes/0', '/Notes/0/Text', '/Tags/0', '/Address/Id'),
  fc.constantFrom('/__proto__', '/constructor/prototype', '/Notes/01', '/Notes/99', '/Id', '/CreatedAt', '/~2'),
  fc.array(memberName, { maxLength: 3 }).map((parts) => parts.map((p) => `/${p}`).join('')),
);
const operation = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), text),
    path: fc.oneof(pointer, number),
    from: pointer,
    value,
  },
  { requiredKeys: [] },
);
const patchBody = fc.oneof(
  fc.array(operation, { maxLength: 8 }).map((ops) => JSON.stringify(ops)),
  fc
    .array(fc.constant({ op: 'copy', from: '/Notes/0', path: '/Notes/-' }), { minLength: 50, maxLength: 120 })
    .map((ops) => JSON.stringify(ops)),
  body,
);

const header = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  fc.constantFrom(
    '"1"',
    'W/"1"',
    '*',
    '"1", "2"',
    '"abc-0123456789abcdef0123456789abcdef"',
    'return=representation',
    'return=minimal',
  ),
);
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json-patch+json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/merge-patch+json',
  ),
  header,
);

/** Mostly what a write needs to reach its body's checks; sometimes not (404, 405, 415 paths). */
const weighted = <T>(usual: T, other: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(usual), weight: 5 }, { arbitrary: other, weight: 1 });

const write = fc.record({
  method: fc.constantFrom('POST', 'PUT', 'PATCH', 'PATCH', 'DELETE'),
  route: weighted('Schemes', fc.constantFrom('Companies', 'Activities', 'Nope')),
  key: weighted('target', fc.constantFrom('missing', '%00', 'constructor', '1')),
  body,
  patchBody,
  contentType: weighted<string | undefined>('auto', contentType),
  prefer: header,
  ifMatch: weighted<string | undefined>(undefined, header),
  idempotencyKey: weighted<string | undefined>(undefined, header),
});

type Write = {
  method: string;
  route: string;
  key: string;
  body: string;
  patchBody: string;
  contentType: string | undefined;
  prefer: string | undefined;
  ifMatch: string | undefined;
  idempotencyKey: string | undefined;
};

function send(w: Write): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  const usualType = w.method === 'PATCH' ? 'application/json-patch+json' : 'application/json';
  if (w.contentType !== undefined) headers['content-type'] = w.contentType === 'auto' ? usualType : w.contentType;
  if (w.prefer !== undefined) headers.prefer = w.prefer;
  if (w.ifMatch !== undefined) headers['if-match'] = w.ifMatch;
  if (w.idempotencyKey !== undefined) headers['idempotency-key'] = w.idempotencyKey;
  const target = w.route === 'Companies' ? companyId : schemeId;
  const key = w.key === 'target' ? target : w.key;
  const path = w.method === 'POST' ? `/${w.route}` : `/${w.route}/${key}`;
  const raw = w.method === 'PATCH' ? w.patchBody : w.method === 'DELETE' ? undefined : w.body;
  return stack.request(w.method, path, raw === undefined ? { headers } : { headers, raw });
}

test('no write gets a 5xx, a non-problem 4xx or a leak', async (t) => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(write, async (w) => {
      // A DELETE of the shared targets would only make later cases 404s.
      if (w.method === 'DELETE' && w.key === 'target') return;
      const res = await send(w);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `${w.method} ${w.route}/${w.key} → ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status >= 500) throw new Error(`5xx: ${where}`);
      if (res.status >= 400) {
        if (!/^application\/problem\+json/.test(res.headers.get('content-type') ?? '')) {
          throw new Error(`4xx without problem+json: ${where}`);
        }
        if (LEAK.test(res.text)) throw new Error(`leak: ${where}`);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
  t.log(`${RUNS} writes (seed ${SEED}); statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  t.is((await stack.get('/health/ready')).status, 200);
  t.is((await stack.request('POST', '/Companies', { body: { Name: 'Still writing' } })).status, 201);
});
