import { gzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertUnauthorized } from '../support/auth';
import {
  answerOf,
  batch,
  batchAnswerOf,
  batchErrorsOf,
  byId,
  countRows,
  createdId,
  sendBatch,
  type BatchRequest,
} from '../support/batch';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * `POST /$batch` (DESIGN §12) refused as a whole: a body that is not a valid batch is ONE 400
 * listing every problem and nothing of it runs (each case carries a valid POST first, which must
 * not be written); a wrong Content-Type is 415; more than BATCH_MAX_REQUESTS requests or more
 * than BATCH_MAX_BYTES is 413 naming the limit. And the caller: 401 without a token, policies per
 * request (403 without a role), admin and other routes unreachable through a batch (404); the
 * batch's requests count toward RATE_LIMIT_PER_MINUTE.
 */

const MAX_REQUESTS = 8;
const MAX_BYTES = 8192;

let stack: Stack;
/** RATE_LIMIT_PER_MINUTE=10: every request of a batch counts as it would alone (issue 24, finding 3). */
let limited: Stack;
let idp: IdentityProvider;
let authStack: Stack;
const tokens = { none: '', User: '', Admin: '' };
test.before(async () => {
  stack = await startStack({
    workers: [(config) => startCommandWorker(config)],
    env: { BATCH_MAX_REQUESTS: String(MAX_REQUESTS), BATCH_MAX_BYTES: String(MAX_BYTES) },
  });
  limited = await startStack({
    workers: [(config) => startCommandWorker(config)],
    env: { RATE_LIMIT_PER_MINUTE: '10' },
  });
  idp = await startIdentityProvider();
  authStack = await startStack({ workers: [(config) => startCommandWorker(config)], env: idp.env.discovery });
  tokens.none = await idp.token({ claims: { sub: 'nobody' } });
  tokens.User = await idp.token({ claims: { sub: 'ursula', roles: ['User'] } });
  tokens.Admin = await idp.token({ claims: { sub: 'ada', roles: 'Admin' } });
});
test.after.always(async () => {
  await stack?.close();
  await limited?.close();
  await authStack?.close();
  await idp?.close();
});

/** A valid write placed before the malformed part: a malformed batch must not run it. */
const canary = (name: string): BatchRequest => ({
  id: 'canary',
  method: 'POST',
  url: 'Companies',
  body: { Name: name },
});
const post = (id: string, extra: Partial<BatchRequest> = {}): BatchRequest => ({
  id,
  method: 'POST',
  url: 'Addresses',
  body: { AddressLine: `line ${id}` },
  ...extra,
});

interface MalformedCase {
  what: string;
  /** The requests after the canary (index 0). */
  rest: unknown[];
  /** Each must appear in some listed error (request positions count the canary). */
  mentions: string[];
  /** The batch has this one problem only: one error. */
  only?: boolean;
}

const MALFORMED: MalformedCase[] = [
  {
    what: 'a duplicate id',
    rest: [post('a1'), { id: 'a1', method: 'GET', url: 'Companies' }],
    mentions: ['requests[2].id', "'a1'"],
    only: true,
  },
  { what: 'a missing id', rest: [{ method: 'GET', url: 'Companies' }], mentions: ['requests[1]'] },
  { what: 'an id that is not a string', rest: [{ id: 5, method: 'GET', url: 'Companies' }], mentions: ['requests[1]'] },
  { what: 'a request that is not an object', rest: ['GET Companies'], mentions: ['requests[1]'] },
  { what: 'a null request', rest: [null], mentions: ['requests[1]'] },
  { what: 'an array as a request', rest: [[]], mentions: ['requests[1]'] },
  {
    what: 'a method that is not a string',
    rest: [{ id: 'm', method: 1, url: 'Companies' }],
    mentions: ['requests[1]'],
  },
  { what: 'no method', rest: [{ id: 'm', url: 'Companies' }], mentions: ['requests[1]'] },
  { what: 'a url that is not a string', rest: [{ id: 'u', method: 'GET', url: {} }], mentions: ['requests[1]'] },
  { what: 'no url', rest: [{ id: 'u', method: 'GET' }], mentions: ['requests[1]'] },
  {
    what: 'dependsOn not an array',
    rest: [{ id: 'd', method: 'GET', url: 'Companies', dependsOn: 'canary' }],
    mentions: ['requests[1]'],
  },
  {
    what: 'dependsOn with a non-string',
    rest: [{ id: 'd', method: 'GET', url: 'Companies', dependsOn: ['canary', 3] }],
    mentions: ['requests[1]'],
  },
  {
    what: 'dependsOn a later request',
    rest: [{ id: 'd', method: 'GET', url: 'Companies', dependsOn: ['later'] }, post('later')],
    mentions: ['requests[1]'],
  },
  {
    what: 'dependsOn an unknown request',
    rest: [{ id: 'd', method: 'GET', url: 'Companies', dependsOn: ['nobody'] }],
    mentions: ['requests[1]'],
  },
  {
    what: 'dependsOn a later group',
    rest: [{ id: 'd', method: 'GET', url: 'Companies', dependsOn: ['g9'] }, post('x', { atomicityGroup: 'g9' })],
    mentions: ['requests[1]'],
  },
  {
    what: 'a split atomicity group',
    rest: [post('x', { atomicityGroup: 'g' }), post('y'), post('z', { atomicityGroup: 'g' })],
    mentions: ['requests[3]'],
  },
  {
    what: 'a split atomicity group around another group',
    rest: [post('x', { atomicityGroup: 'g' }), post('y', { atomicityGroup: 'h' }), post('z', { atomicityGroup: 'g' })],
    mentions: ['requests[3]'],
  },
  {
    what: 'a $ref url to a later request',
    rest: [{ id: 'p', method: 'GET', url: '$later' }, post('later')],
    mentions: ['requests[1]'],
  },
  {
    what: 'a $ref url to an unknown request',
    rest: [{ id: 'p', method: 'GET', url: '$nobody' }],
    mentions: ['requests[1]'],
  },
  {
    what: 'a $ref in a body to a later request',
    rest: [{ id: 's', method: 'POST', url: 'Schemes', body: { SchemeName: 'S', Address: { Id: '$a9' } } }, post('a9')],
    mentions: ['requests[1]'],
  },
  {
    what: 'a $ref in a PATCH path value to an unknown request',
    rest: [
      post('a', { url: 'Schemes', body: { SchemeName: 'S' } }),
      {
        id: 'p',
        dependsOn: ['a'],
        method: 'PATCH',
        url: '$a',
        headers: { 'content-type': 'application/json-patch+json' },
        body: [{ op: 'replace', path: '/Address/Id', value: '$zz' }],
      },
    ],
    mentions: ['requests[2]'],
  },
  {
    what: 'a $ref to a request that is not a POST',
    rest: [
      { id: 'g', method: 'GET', url: 'Companies' },
      { id: 'p', dependsOn: ['g'], method: 'GET', url: '$g' },
    ],
    mentions: ['requests[2]'],
  },
  {
    what: 'a $ref to an earlier lone POST not named in dependsOn',
    rest: [post('a'), { id: 's', method: 'POST', url: 'Schemes', body: { SchemeName: 'S', Address: { Id: '$a' } } }],
    mentions: ['requests[2]'],
  },
  {
    what: 'a $ref to another group not named in dependsOn',
    rest: [
      post('a', { atomicityGroup: 'g1' }),
      {
        id: 's',
        atomicityGroup: 'g2',
        method: 'POST',
        url: 'Schemes',
        body: { SchemeName: 'S', Address: { Id: '$a' } },
      },
    ],
    mentions: ['requests[2]'],
  },
  {
    what: 'a $ref url outside the group and dependsOn',
    rest: [post('a', { atomicityGroup: 'g1' }), { id: 'r', dependsOn: ['canary'], method: 'DELETE', url: '$a' }],
    mentions: ['requests[2]'],
  },
];

for (const [i, c] of MALFORMED.entries()) {
  test(`malformed: ${c.what} is one 400 and nothing runs`, async (t) => {
    const name = `Canary malformed ${i}`;
    const res = await stack.request('POST', '/$batch', { body: { requests: [canary(name), ...c.rest] } });
    const errors = batchErrorsOf(t, res);
    if (c.only) t.is(errors.length, 1, JSON.stringify(errors));
    for (const mention of c.mentions)
      t.true(
        errors.some((e) => e.includes(mention)),
        `an error names ${mention}: ${JSON.stringify(errors)}`,
      );
    t.is(await countRows(stack, 'companies', { name }), 0, 'the canary did not run');
  });
}

/** Asserts each index is named by some error, and the duplicate id by its own. */
function assertEveryProblem(t: ExecutionContext, errors: string[], indexes: number[]) {
  t.true(
    errors.some((e) => e.includes('requests[2].id') && e.includes("'a1'")),
    `the duplicate id in ${JSON.stringify(errors)}`,
  );
  for (const index of indexes) {
    t.true(
      errors.some((e) => e.includes(`requests[${index}]`)),
      `requests[${index}] in ${JSON.stringify(errors)}`,
    );
  }
  t.true(errors.length >= indexes.length + 1, JSON.stringify(errors));
}

test('malformed: every problem between requests (ids, groups, references) is listed in the one 400', async (t) => {
  const name = 'Canary malformed all';
  const requests = [
    canary(name),
    post('a1'),
    { id: 'a1', method: 'GET', url: 'Companies' },
    post('x', { atomicityGroup: 'g' }),
    post('y'),
    post('z', { atomicityGroup: 'g' }),
    { id: 'p', method: 'GET', url: '$nobody' },
    { id: 'q', method: 'GET', url: 'Companies', dependsOn: ['later'] },
  ];
  const errors = batchErrorsOf(t, await stack.request('POST', '/$batch', { body: { requests } }));
  assertEveryProblem(t, errors, [5, 6, 7]);
  t.is(await countRows(stack, 'companies', { name }), 0);
});

test("malformed: problems of a request's shape and problems between requests are all listed together", async (t) => {
  const name = 'Canary malformed all kinds';
  const requests = [
    canary(name),
    post('a1'),
    { id: 'a1', method: 'GET', url: 'Companies' },
    { method: 'GET', url: 'Companies' },
    post('x', { atomicityGroup: 'g' }),
    post('y'),
    post('z', { atomicityGroup: 'g' }),
    { id: 'p', method: 'GET', url: '$nobody' },
  ];
  const errors = batchErrorsOf(t, await stack.request('POST', '/$batch', { body: { requests } }));
  assertEveryProblem(t, errors, [3, 6, 7]);
  t.is(await countRows(stack, 'companies', { name }), 0);
});

test('malformed: a body that is not an object or has no requests array is one 400', async (t) => {
  for (const raw of [
    '[]',
    '"requests"',
    '42',
    'null',
    'true',
    '{}',
    '{"requests":{}}',
    '{"requests":"x"}',
    '{"requests":null}',
  ]) {
    const res = await stack.request('POST', '/$batch', { raw, headers: { 'content-type': 'application/json' } });
    batchErrorsOf(t, res);
  }
  // Not JSON at all: a 400 problem too.
  const broken = await stack.request('POST', '/$batch', {
    raw: `{"requests": [${JSON.stringify(canary('Canary broken json'))}`,
    headers: { 'content-type': 'application/json' },
  });
  t.is(broken.status, 400, broken.text);
  t.regex(broken.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.is(await countRows(stack, 'companies', { name: 'Canary broken json' }), 0);
});

test('415 for any Content-Type but application/json; nothing runs', async (t) => {
  const requests = [canary('Canary media type')];
  const raw = JSON.stringify({ requests });
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json-patch+json',
    'multipart/mixed; boundary=b',
    undefined,
  ]) {
    const res = await stack.request('POST', '/$batch', { raw, headers: type ? { 'content-type': type } : {} });
    t.is(res.status, 415, `${type}: ${res.text}`);
    t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    t.like(res.body as object, { type: 'about:blank', title: 'Unsupported Media Type', status: 415 });
  }
  t.is(await countRows(stack, 'companies', { name: 'Canary media type' }), 0);
  const ok = await stack.request('POST', '/$batch', {
    raw,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.is(ok.status, 200, ok.text);
  t.is(await countRows(stack, 'companies', { name: 'Canary media type' }), 1);
});

test('a batch is JSON in UTF-8: another charset is 415 naming it; a gzip-compressed batch is read', async (t) => {
  const raw = JSON.stringify({ requests: [canary('Canary charset')] });
  const latin1 = await stack.request('POST', '/$batch', {
    raw,
    headers: { 'content-type': 'application/json; charset=iso-8859-1' },
  });
  t.is(latin1.status, 415, latin1.text);
  t.regex((latin1.body as { detail: string }).detail, /UTF-8.*iso-8859-1/);
  t.is(await countRows(stack, 'companies', { name: 'Canary charset' }), 0);
  const zipped = await fetch(`${stack.baseUrl}/$batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(raw),
  });
  t.is(zipped.status, 200, await zipped.clone().text());
  t.is(((await zipped.json()) as { responses: { status: number }[] }).responses[0]?.status, 201);
  t.is(await countRows(stack, 'companies', { name: 'Canary charset' }), 1);
});

test('413 above BATCH_MAX_REQUESTS, naming it; nothing runs; the limit itself is accepted', async (t) => {
  const requests = (name: string, n: number): BatchRequest[] => [
    canary(name),
    ...Array.from({ length: n - 1 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: 'Countries/$count' })),
  ];
  const over = await sendBatch(stack, requests('Canary too many', MAX_REQUESTS + 1));
  t.is(over.status, 413, over.text);
  t.regex(over.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.like(over.body as object, { type: 'about:blank', title: 'Payload Too Large', status: 413 });
  t.regex((over.body as { detail?: string }).detail ?? '', /BATCH_MAX_REQUESTS/);
  t.is(await countRows(stack, 'companies', { name: 'Canary too many' }), 0);

  const responses = await batch(stack, requests('Canary at the limit', MAX_REQUESTS));
  t.is(responses.length, MAX_REQUESTS);
  t.is(responses[0]!.status, 201);
});

test('413 above BATCH_MAX_BYTES, naming it; nothing runs; a batch under it is accepted', async (t) => {
  const padded = (name: string, bytes: number) => {
    const requests = [canary(name), { id: 'pad', method: 'GET', url: 'Countries/$count', body: { Pad: '' } }];
    const base = JSON.stringify({ requests }).length;
    requests[1]!.body = { Pad: 'p'.repeat(bytes - base) };
    const raw = JSON.stringify({ requests });
    if (raw.length !== bytes) throw new Error(`built ${raw.length} bytes, not ${bytes}`);
    return stack.request('POST', '/$batch', { raw, headers: { 'content-type': 'application/json' } });
  };
  const over = await padded('Canary too big', MAX_BYTES + 1);
  t.is(over.status, 413, over.text);
  t.regex(over.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.like(over.body as object, { type: 'about:blank', title: 'Payload Too Large', status: 413 });
  t.regex((over.body as { detail?: string }).detail ?? '', /BATCH_MAX_BYTES/);
  t.is(await countRows(stack, 'companies', { name: 'Canary too big' }), 0);

  const under = await padded('Canary big enough', MAX_BYTES);
  t.is(under.status, 200, under.text);
  t.is(await countRows(stack, 'companies', { name: 'Canary big enough' }), 1);
});

test('auth: a batch without a token is 401, before its body is read', async (t) => {
  assertUnauthorized(t, await sendBatch(authStack, [canary('Canary no token')]));
  assertUnauthorized(
    t,
    await authStack.request('POST', '/$batch', {
      raw: '{"requests": [',
      headers: { 'content-type': 'application/json' },
    }),
  );
  assertUnauthorized(
    t,
    await sendBatch(authStack, [canary('Canary bad token')], { authorization: 'Bearer garbage' }),
    'invalid_token',
  );
  t.is(await countRows(authStack, 'companies', { name: 'Canary no token' }), 0);
});

test('auth: a caller without a role gets 403 for each request, as alone; nothing is written', async (t) => {
  const caller = bearer(tokens.none);
  const requests: BatchRequest[] = [
    { id: 'read', method: 'GET', url: 'Schemes' },
    { id: 'count', method: 'GET', url: 'Schemes/$count' },
    canary('Canary no role'),
    { id: 'grouped', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Canary no role 2' } },
  ];
  const responses = await batch(authStack, requests, caller);
  const lone = answerOf(await authStack.request('GET', '/Schemes', { headers: caller }));
  t.is(lone.status, 403);
  for (const r of responses) {
    t.is(r.status, 403, JSON.stringify(r));
    t.like(r.body as object, { type: 'about:blank', title: 'Forbidden', status: 403 });
  }
  t.deepEqual(batchAnswerOf(responses[0]!), lone);
  t.is(await countRows(authStack, 'companies', { name: 'Canary no role' }), 0);
  t.is(await countRows(authStack, 'companies', { name: 'Canary no role 2' }), 0);
});

const UNREACHABLE: [string, string][] = [
  ['GET', 'Jobs'],
  ['GET', 'Jobs/views/1'],
  ['POST', 'Jobs/RebuildViews'],
  ['GET', 'Roles/Assignments'],
  ['POST', 'Roles/Assignments'],
  ['GET', 'Roles'],
  ['GET', 'Roles/Available'],
  ['GET', 'Export/Schemes'],
  ['GET', `Commands/${randomUUID()}`],
  ['GET', 'admin/queues'],
  ['GET', 'health/live'],
];

test('auth: a User reaches entity routes through a batch, as itself; admin and other routes are 404', async (t) => {
  const requests: BatchRequest[] = [
    ...UNREACHABLE.map(([method, url], i) => ({
      id: `u${i}`,
      method,
      url,
      ...(method === 'POST' ? { body: { Subject: 'ursula', Role: 'Admin' } } : {}),
    })),
    { id: 'read', method: 'GET', url: 'Schemes/$count' },
    { id: 'write', method: 'POST', url: 'Companies', body: { Name: 'Written by ursula' } },
  ];
  const r = byId(await batch(authStack, requests, bearer(tokens.User)));
  for (const [i, [method, url]] of UNREACHABLE.entries()) {
    const res = r[`u${i}`]!;
    t.is(res.status, 404, `${method} ${url}: ${JSON.stringify(res)}`);
    t.like(res.body as object, { type: 'about:blank', title: 'Not Found', status: 404 }, `${method} ${url}`);
  }
  t.is(r.read!.status, 200);
  t.is(r.write!.status, 201);
  // The batch's caller is the caller of its writes.
  const [row] = (await authStack.knex('outbox').whereRaw("event->>'entityId' = ?", [createdId(r.write!)])) as {
    event: DomainEvent;
  }[];
  t.is(row?.event.subject, 'ursula');
  t.is(await countRows(authStack, 'role_assignments', { subject: 'ursula' }), 0);
});

test('auth: admin routes are not reachable through a batch for an Admin either', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'jobs', method: 'GET', url: 'Jobs' },
    { id: 'assignments', method: 'GET', url: 'Roles/Assignments' },
    { id: 'board', method: 'GET', url: 'admin/queues/api/queues' },
    { id: 'read', method: 'GET', url: 'Countries/$count' },
  ];
  const r = byId(await batch(authStack, requests, bearer(tokens.Admin)));
  for (const id of ['jobs', 'assignments', 'board']) {
    t.is(r[id]!.status, 404, JSON.stringify(r[id]));
    t.like(r[id]!.body as object, { type: 'about:blank', title: 'Not Found', status: 404 });
  }
  t.is(r.read!.status, 200);
});

test('RATE_LIMIT_PER_MINUTE counts every request of a batch: past it the batch is a 429 and nothing runs', async (t) => {
  const gets = (n: number): BatchRequest[] =>
    Array.from({ length: n }, (_, i) => ({ id: `g${i}`, method: 'GET', url: 'Countries/$count' }));
  // 4 of 10: each request counts, the batch itself as its first.
  t.is((await batch(limited, gets(4))).length, 4);
  // 9 more: over.
  const over = await sendBatch(limited, [canary('Canary rate limited'), ...gets(8)]);
  t.is(over.status, 429, over.text);
  t.regex(over.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.like(over.body as object, { type: 'about:blank', title: 'Too Many Requests', status: 429 });
  t.regex((over.body as { detail?: string }).detail ?? '', /RATE_LIMIT_PER_MINUTE/);
  t.truthy(over.headers.get('retry-after'));
  t.is(await countRows(limited, 'companies', { name: 'Canary rate limited' }), 0);
});

test("a /$batch inside a batch is that request's own 404, as docs/api.md says", async (t) => {
  const requests: BatchRequest[] = [
    { id: 'nested', method: 'POST', url: '/$batch', body: { requests: [] } },
    { id: 'encoded', method: 'POST', url: '%24batch', body: { requests: [] } },
    { id: 'read', method: 'GET', url: 'Countries/$count' },
  ];
  const r = byId(await batch(stack, requests));
  for (const id of ['nested', 'encoded']) {
    t.is(r[id]!.status, 404, JSON.stringify(r[id]));
    t.like(r[id]!.body as object, { type: 'about:blank', title: 'Not Found', status: 404 });
  }
  t.is(r.read!.status, 200);
});
