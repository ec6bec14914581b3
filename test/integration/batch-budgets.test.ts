import test from 'ava';
import fc from 'fast-check';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertUnauthorized } from '../support/auth';
import { testQueue } from '../support/queues';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { JSON_PATCH, create } from '../support/writes';
import {
  answerOf,
  batch,
  batchAnswerOf,
  byId,
  countRows,
  sendBatch,
  type BatchRequest,
  type BatchResponse,
} from '../support/batch';

/**
 * The budgets of a `$batch` (issue 24, findings 3, 4 and 7; DESIGN §12, §13): every request counts
 * toward RATE_LIMIT_PER_MINUTE as it would alone, writes included; a batch weighs its writes in
 * MAX_PENDING_COMMANDS_PER_SUBJECT; its GETs may read at most BATCH_MAX_READ_ROWS rows (estimated
 * before anything runs) and take at most BATCH_READ_TIMEOUT_MS, those of one atomicity group
 * BATCH_GROUP_READ_TIMEOUT_MS; and a token in a request's URL is judged as on a lone request.
 */

/** The read of the issue: 1,000 of them in one batch held Postgres for 27 s. */
const HEAVY =
  'Schemes?$top=1000&$expand=Companies($expand=Company),Address($expand=Country),Developments,Market,BuildingType,DevelopmentType,DevelopmentStatus,Country';

const worker = [(config: Stack['config']) => startCommandWorker(config)];

let stack: Stack;
let rateLimited: Stack;
let pending: Stack;
let quick: Stack;
let idp: IdentityProvider;
let authStack: Stack;
test.before(async () => {
  [stack, rateLimited, pending, quick, idp] = await Promise.all([
    startStack({ workers: worker }),
    startStack({ workers: worker, env: { RATE_LIMIT_PER_MINUTE: '30' } }),
    // No worker: what is queued stays pending.
    startStack({
      workers: [],
      env: { MAX_PENDING_COMMANDS_PER_SUBJECT: '5', COMMAND_TIMEOUT_MS: '200', BATCH_TIMEOUT_MS: '200' },
    }),
    // Read time budgets no batch of several reads can keep.
    startStack({ workers: worker, env: { BATCH_READ_TIMEOUT_MS: '1', BATCH_GROUP_READ_TIMEOUT_MS: '1' } }),
    startIdentityProvider(),
  ]);
  authStack = await startStack({ workers: worker, env: idp.env.discovery });
});
test.after.always(async () => {
  await Promise.allSettled([stack, rateLimited, pending, quick, authStack].map((s) => s?.close()));
  await idp?.close();
});

const detailOf = (body: unknown) => (body as { detail?: string } | undefined)?.detail ?? '';
const addresses = (prefix: string, n: number): BatchRequest[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `a${i}`,
    method: 'POST',
    url: 'Addresses',
    body: { AddressLine: `${prefix} ${i}` },
  }));
const addressRows = (on: Stack, prefix: string) =>
  on
    .knex('addresses')
    .whereLike('address_line', `${prefix} %`)
    .count<{ n: string }[]>({ n: '*' })
    .then(([row]) => Number(row!.n));

test.serial('RATE_LIMIT_PER_MINUTE counts every request of a batch, writes included', async (t) => {
  // 20 of 30 (the batch itself is its first request).
  t.deepEqual([...new Set((await batch(rateLimited, addresses('Rated', 20))).map((r) => r.status))], [201]);
  // 20 more do not fit: refused whole before anything is queued.
  const over = await sendBatch(rateLimited, addresses('Refused', 20));
  t.is(over.status, 429, over.text);
  t.regex(over.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.regex(detailOf(over.body), /RATE_LIMIT_PER_MINUTE/);
  t.truthy(over.headers.get('retry-after'));
  t.is(await addressRows(rateLimited, 'Refused'), 0, 'nothing of the refused batch was written');
  // The refused batch cost only itself: 9 more still fit (21 + 9 = 30), a 10th request does not.
  t.is((await batch(rateLimited, addresses('Fits', 9))).length, 9);
  t.is((await rateLimited.get('/Countries?$top=1')).status, 429);
  t.is(await addressRows(rateLimited, 'Rated'), 20);
  t.is(await addressRows(rateLimited, 'Fits'), 9);
});

test('a batch of more requests than RATE_LIMIT_PER_MINUTE allows in a minute could never run: 413 naming it', async (t) => {
  const local = await startStack({ workers: worker, env: { RATE_LIMIT_PER_MINUTE: '30' } });
  t.teardown(() => local.close());
  const res = await sendBatch(local, addresses('Never', 31));
  t.is(res.status, 413, res.text);
  t.regex(detailOf(res.body), /RATE_LIMIT_PER_MINUTE/);
  t.is(await addressRows(local, 'Never'), 0);
});

test.serial('MAX_PENDING_COMMANDS_PER_SUBJECT sees a batch as the writes it holds', async (t) => {
  // No worker: one lone command stays pending (weight 1 of 5).
  t.is((await pending.request('POST', '/Companies', { body: { Name: 'Pending lone' } })).status, 202);
  // 1 + 5 writes > 5: refused before it is queued.
  const over = await sendBatch(pending, addresses('Heavy pending', 5));
  t.is(over.status, 429, over.text);
  t.regex(detailOf(over.body), /MAX_PENDING_COMMANDS_PER_SUBJECT/);
  t.is(over.headers.get('retry-after'), '1');
  const queue = testQueue(pending.config, QUEUE.commands);
  t.teardown(() => queue.close());
  t.is(await queue.count(), 1, 'the refused batch was never queued');
  // 1 + 4 = 5 fits; then nothing more does.
  t.is((await sendBatch(pending, addresses('Light pending', 4))).status, 202);
  t.is((await pending.request('POST', '/Companies', { body: { Name: 'One too many' } })).status, 429);
});

test('a batch of more writes than MAX_PENDING_COMMANDS_PER_SUBJECT runs alone: it holds the whole allowance', async (t) => {
  const local = await startStack({
    workers: [],
    env: { MAX_PENDING_COMMANDS_PER_SUBJECT: '5', BATCH_TIMEOUT_MS: '200', COMMAND_TIMEOUT_MS: '200' },
  });
  t.teardown(() => local.close());
  t.is((await sendBatch(local, addresses('Whole allowance', 12))).status, 202, 'admitted with nothing else pending');
  const next = await local.request('POST', '/Companies', { body: { Name: 'Behind the big batch' } });
  t.is(next.status, 429, next.text);
  t.regex(detailOf(next.body), /MAX_PENDING_COMMANDS_PER_SUBJECT/);
});

test('the read of the issue, 999 times in a batch: 400 naming BATCH_MAX_READ_ROWS before anything runs', async (t) => {
  t.is((await stack.get(`/${HEAVY}`)).status, 200, 'alone, the read is allowed');
  const requests: BatchRequest[] = [
    { id: 'canary', method: 'POST', url: 'Companies', body: { Name: 'Canary read rows' } },
    ...Array.from({ length: 999 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: HEAVY })),
  ];
  const res = await sendBatch(stack, requests);
  t.is(res.status, 400, res.text.slice(0, 500));
  t.regex(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  t.regex(detailOf(res.body), /BATCH_MAX_READ_ROWS/);
  t.regex(detailOf(res.body), /'r0'/, 'names the heaviest request');
  t.is(await countRows(stack, 'companies', { name: 'Canary read rows' }), 0);
});

test("another caller's read and write are answered while a heavy batch is refused", async (t) => {
  const other = await create(stack, 'Companies', { Name: 'Other row' });
  const heavy = sendBatch(
    stack,
    Array.from({ length: 1000 }, (_, i) => ({ id: `h${i}`, method: 'GET', url: HEAVY })),
  );
  const [read, patched, refused] = await Promise.all([
    stack.get('/Countries?$top=1'),
    stack.request('PATCH', `/Companies/${other}`, {
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Name', value: 'Other row, patched' }],
    }),
    heavy,
  ]);
  t.is(read.status, 200);
  t.is(patched.status, 204, patched.text);
  t.is(refused.status, 400);
  t.regex(detailOf(refused.body), /BATCH_MAX_READ_ROWS/);
});

test("another caller's read and write are answered while a heavy batch within its budgets runs", async (t) => {
  // 20,000 companies: 100 GETs of 1,000 rows each (100,000 rows, just within BATCH_MAX_READ_ROWS).
  const local = await startStack({ workers: worker });
  t.teardown(() => local.close());
  for (let chunk = 0; chunk < 20; chunk++) {
    await local
      .knex('companies')
      .insert(Array.from({ length: 1000 }, (_, i) => ({ name: `Bulk ${chunk}-${i} ${'x'.repeat(20)}` })));
  }
  const other = await create(local, 'Companies', { Name: 'Row of another caller' });
  const finished: string[] = [];
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const heavy = sendBatch(
    local,
    Array.from({ length: 100 }, (_, i) => ({
      id: `h${i}`,
      method: 'GET',
      url: `Companies?$top=1000&$orderby=Name`,
    })),
  ).then((res) => {
    finished.push('batch');
    t.log(`batch answered after ${ms()} ms`);
    return res;
  });
  // Sent once the batch is queued and running.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const read = local.get('/Countries?$top=1').then((res) => {
    finished.push('read');
    t.log(`read answered after ${ms()} ms`);
    return res;
  });
  const patch = local
    .request('PATCH', `/Companies/${other}`, {
      headers: JSON_PATCH,
      body: [{ op: 'replace', path: '/Name', value: 'Row of another caller, patched' }],
    })
    .then((res) => {
      finished.push('patch');
      t.log(`patch answered after ${ms()} ms`);
      return res;
    });
  const [batchRes, readRes, patchRes] = await Promise.all([heavy, read, patch]);
  t.is(batchRes.status, 200, batchRes.text.slice(0, 300));
  t.is(readRes.status, 200);
  t.is(patchRes.status, 204, patchRes.text);
  t.is(finished.at(-1), 'batch', `answered in the order ${finished.join(', ')}`);
});

test('with mock authentication (which reads no token) access_token in a batch url is dropped before the job is queued', async (t) => {
  const secret = 'mock-url-secret-5678';
  const [r] = await batch(stack, [{ id: 'r', method: 'GET', url: `Countries?$top=1&%61ccess_token=${secret}` }]);
  t.is(r!.status, 200);
  t.false(JSON.stringify(r).includes(secret), 'not in the answer (its Link) either');
  const queue = testQueue(stack.config, QUEUE.commands);
  t.teardown(() => queue.close());
  const jobs = await queue.getJobs(['completed', 'failed', 'waiting', 'active', 'delayed']);
  t.true(jobs.length > 0);
  t.false(JSON.stringify(jobs.map((job) => job.data)).includes(secret));
});

test('past BATCH_READ_TIMEOUT_MS the GETs not run answer 429 naming it; the writes still run', async (t) => {
  const requests: BatchRequest[] = [
    ...Array.from({ length: 30 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: 'Companies?$top=5' })),
    { id: 'after', method: 'POST', url: 'Companies', body: { Name: 'After the read budget' } },
  ];
  const responses = await batch(quick, requests);
  const reads = responses.slice(0, 30);
  for (const r of reads) {
    if (r.status === 200) continue;
    t.is(r.status, 429, JSON.stringify(r));
    t.regex(detailOf(r.body), /BATCH_READ_TIMEOUT_MS/);
    t.truthy(r.headers['Retry-After'] ?? r.headers['retry-after']);
  }
  t.is(reads.at(-1)!.status, 429, 'the last reads were not run');
  t.is(responses.at(-1)!.status, 201);
  t.is(await countRows(quick, 'companies', { name: 'After the read budget' }), 1);
});

test('past BATCH_GROUP_READ_TIMEOUT_MS an atomicity group fails as a unit: nothing written, the others 424', async (t) => {
  const requests: BatchRequest[] = [
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Locked group' } },
    ...Array.from({ length: 20 }, (_, i) => ({
      id: `r${i}`,
      atomicityGroup: 'g',
      method: 'GET',
      url: 'Companies?$top=5',
    })),
  ];
  const responses = await batch(quick, requests);
  const failed = responses.filter((r) => r.status !== 424);
  t.is(failed.length, 1, JSON.stringify(responses.map((r) => r.status)));
  t.is(failed[0]!.status, 429);
  t.regex(detailOf(failed[0]!.body), /BATCH_(GROUP_)?READ_TIMEOUT_MS/);
  t.is(await countRows(quick, 'companies', { name: 'Locked group' }), 0);
});

test('a batch GET with access_token in its url answers what it answers alone: 401, and the token is never queued', async (t) => {
  const token = await idp.token({ claims: { sub: 'tess', roles: ['User'] } });
  const secret = 'batch-url-secret-1234';
  for (const name of ['access_token', '%61ccess_token']) {
    const lone = await authStack.get(`/Countries?$top=1&${name}=${secret}`, bearer(token));
    assertUnauthorized(t, lone, 'invalid_request');
    const [r] = await batch(
      authStack,
      [{ id: 'r', method: 'GET', url: `Countries?$top=1&${name}=${secret}` }],
      bearer(token),
    );
    const inBatch = batchAnswerOf(r!);
    const alone = answerOf(lone);
    t.is(inBatch.status, 401, JSON.stringify(r));
    t.deepEqual(inBatch.body, alone.body);
    t.is(r!.headers['www-authenticate'], lone.headers.get('www-authenticate') ?? undefined, 'the same challenge');
  }
  const queue = testQueue(authStack.config, QUEUE.commands);
  t.teardown(() => queue.close());
  const jobs = await queue.getJobs(['completed', 'failed', 'waiting', 'active', 'delayed']);
  t.true(jobs.length > 0);
  t.false(JSON.stringify(jobs.map((job) => job.data)).includes(secret), 'the url credentials reached the job data');
});

test('fast-check: random batches of GETs and POSTs never answer a 5xx, and a refusal names its limit', async (t) => {
  const local = await startStack({ workers: worker, env: { BATCH_MAX_READ_ROWS: '20000' } });
  t.teardown(() => local.close());
  const expansion = fc.constantFrom(
    'Companies',
    'Companies($expand=Company)',
    'Companies($top=7)',
    'Address',
    'Address($expand=Country)',
    'Developments',
    'Market',
    'Country',
  );
  const get = fc
    .record({
      route: fc.constantFrom('Schemes', 'Companies', 'Addresses', 'Countries', 'Schemes/$count'),
      top: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
      skip: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }),
      expand: fc.uniqueArray(expansion, { maxLength: 4 }),
    })
    .map(({ route, top, skip, expand }) => {
      const options = [
        top === undefined ? '' : `$top=${top}`,
        skip === undefined ? '' : `$skip=${skip}`,
        route.startsWith('Schemes') && !route.endsWith('$count') && expand.length ? `$expand=${expand.join(',')}` : '',
      ].filter(Boolean);
      return { method: 'GET', url: options.length ? `${route}?${options.join('&')}` : route };
    });
  const post = fc.string({ minLength: 1, maxLength: 20 }).map((name) => ({
    method: 'POST',
    url: 'Companies',
    body: { Name: name },
  }));
  const requests = fc
    .array(fc.oneof(get, post), { minLength: 1, maxLength: 30 })
    .map((list) => list.map((request, i) => ({ id: `q${i}`, ...request }) as BatchRequest));
  await fc.assert(
    fc.asyncProperty(requests, async (list) => {
      const res = await sendBatch(local, list);
      if (res.status !== 200) {
        t.is(res.status, 400, res.text.slice(0, 300));
        t.regex(detailOf(res.body), /BATCH_MAX_READ_ROWS/);
        return;
      }
      for (const r of (res.body as { responses: BatchResponse[] }).responses) {
        t.true(r.status < 500, JSON.stringify(r).slice(0, 300));
        // Past a limit (not a body the entity refuses): the answer names it.
        if (r.status > 400) t.regex(detailOf(r.body), /BATCH_|MAX_|RATE_/, JSON.stringify(r).slice(0, 300));
      }
    }),
    { numRuns: 40 },
  );
  t.pass();
});

test('the batch of rows within BATCH_MAX_READ_ROWS runs as before', async (t) => {
  const r = byId(
    await batch(stack, [
      { id: 'page', method: 'GET', url: 'Countries?$top=1000' },
      { id: 'count', method: 'GET', url: 'Countries/$count' },
    ]),
  );
  t.is(r.page!.status, 200);
  t.is(r.count!.status, 200);
});
