import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import type { DomainEvent } from '../../domain/events/domain-event';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import {
  assertBatchProblem,
  assertFailedDependency,
  batch,
  byId,
  countRows,
  createdId,
  createdIds,
  headerOf,
  responsesOf,
  sendBatch,
  type BatchRequest,
  type BatchResponse,
} from '../support/batch';
import { waitFor } from '../support/writes';

/**
 * `POST /$batch` (DESIGN §12) as one command job: a 1,000-request group applied whole or not at
 * all, the default limits, Idempotency-Key repeats, the 202 + /Commands/<id> path of a batch that
 * outlives BATCH_TIMEOUT_MS, and a command worker process SIGKILLed in the middle of a group
 * (COMMAND_TEST_PAUSE_AT, as writes-recovery.test.ts): another worker recovers the job and every
 * unit is applied exactly once.
 *
 * Which workers run matters here (the killed worker must be the only one holding the job), so the
 * tests are serial and start the in-process workers they need themselves.
 */

const WORKER_MAIN = path.resolve(__dirname, '../../workers/commands/main.js');
const BATCH_TIMEOUT_MS = 200;

let stack: Stack;
let slow: Stack;
test.before(async () => {
  stack = await startStack({ workers: [] });
  // A deadline the paused worker cannot meet: the batch answers 202.
  slow = await startStack({ workers: [], env: { BATCH_TIMEOUT_MS: String(BATCH_TIMEOUT_MS) } });
});
test.after.always(async () => {
  await stack?.close();
  await slow?.close();
});

async function withWorker(t: ExecutionContext, on: Stack = stack) {
  const worker = await startCommandWorker(on.config);
  t.teardown(() => worker.close());
}

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** How many times the worker has paused a command (one log line each). */
  pauses(): number;
  exited: Promise<unknown>;
}

/** A command worker process holding every command `pauseMs` before its commit, once it is ready. */
async function startPausedWorker(
  t: ExecutionContext,
  on: Stack,
  pauseMs: number,
  stalledRecovery = false,
): Promise<WorkerProcess> {
  const worker = spawnWorker(t, on, pauseMs, stalledRecovery);
  await waitForOutput(worker, () => worker.output().includes('commands worker ready'), 'worker start');
  return worker;
}

function spawnWorker(t: ExecutionContext, on: Stack, pauseMs: number, stalledRecovery = false): WorkerProcess {
  const child = spawn(process.execPath, [WORKER_MAIN], {
    env: workerProcessEnv(on, {
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: '1',
      DB_POOL_MAX: '2',
      ...(stalledRecovery ? { COMMAND_LOCK_DURATION_MS: '1000', COMMAND_STALLED_INTERVAL_MS: '250' } : {}),
      COMMAND_TEST_PAUSE_MS: String(pauseMs),
      COMMAND_TEST_PAUSE_AT: 'before-commit',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.teardown(() => void child.kill('SIGKILL'));
  return {
    child,
    output: () => output,
    pauses: () => output.split('"msg":"test pause').length - 1,
    exited,
  };
}

async function waitForOutput(worker: WorkerProcess, check: () => boolean, what: string) {
  await waitFor(async () => check(), 20_000).catch((err: unknown) => {
    throw new Error(`${what}: ${(err as Error).message}; worker output:\n${worker.output()}`, { cause: err });
  });
}

/** Waits for the worker's `pauses`th held commit, then kills it there. */
async function killAtPause(worker: WorkerProcess, pauses: number, what: string): Promise<void> {
  await waitForOutput(worker, () => worker.pauses() >= pauses, what);
  worker.child.kill('SIGKILL');
  await worker.exited;
}

/** Another worker notices the dead one's lapsed lock and runs the job again. */
async function startRecoveringWorker(t: ExecutionContext) {
  const recovering = await startCommandWorker(stack.config, {
    stalledRecovery: { lockDuration: 1000, stalledInterval: 250 },
  });
  t.teardown(() => recovering.close());
}

const companies = (prefix: string) =>
  stack.knex('companies').whereLike('name', `${prefix}%`).orderBy('id') as Promise<{ id: number; name: string }[]>;

test.serial('a 1,000-request group of POSTs succeeds and all 1,000 rows exist', async (t) => {
  await withWorker(t);
  const requests: BatchRequest[] = Array.from({ length: 1000 }, (_, i) => ({
    id: `c${i}`,
    atomicityGroup: 'thousand',
    method: 'POST',
    url: 'Companies',
    body: { Name: `Thousand ${String(i).padStart(4, '0')}` },
  }));
  const responses = await batch(stack, requests);
  t.deepEqual([...new Set(responses.map((r) => r.status))], [201]);
  const rows = await companies('Thousand ');
  t.is(rows.length, 1000);
  // Each response's Location is the row its request created, in request order.
  t.deepEqual(
    responses.map(createdId),
    rows.map((row) => encodeId('Company', row.id)),
  );
  t.deepEqual(
    rows.map((row) => row.name),
    requests.map((r) => (r.body as { Name: string }).Name),
  );
  const events = (await stack.knex('outbox').whereRaw("event->>'name' = 'CompanyCreated'")) as { event: DomainEvent }[];
  const created = new Set(responses.map(createdId));
  t.is(events.filter((e) => created.has(e.event.entityId)).length, 1000, 'one event per entity');
});

test.serial('a 1,000-request group whose last request fails leaves nothing', async (t) => {
  await withWorker(t);
  const missing = encodeId('Address', 987_654);
  const requests: BatchRequest[] = Array.from({ length: 999 }, (_, i) => ({
    id: `c${i}`,
    atomicityGroup: 'thousand',
    method: 'POST',
    url: 'Companies',
    body: { Name: `Undone ${String(i).padStart(4, '0')}` },
  }));
  requests.push({
    id: 'last',
    atomicityGroup: 'thousand',
    method: 'POST',
    url: 'Schemes',
    body: { SchemeName: 'Undone scheme', Address: { Id: missing } },
  });
  const responses = await batch(stack, requests);
  assertBatchProblem(t, responses[999], 400, 'Validation Failed', {
    errors: [`Scheme.Address.Id: Address '${missing}' does not exist`],
  });
  const others = responses.slice(0, 999);
  t.deepEqual([...new Set(others.map((r) => r.status))], [424]);
  assertFailedDependency(t, others[0], 'last');
  assertFailedDependency(t, others[998], 'last');
  t.is((await companies('Undone ')).length, 0);
  t.is(await countRows(stack, 'schemes', { scheme_name: 'Undone scheme' }), 0);
});

test.serial('at the default limits: 1,001 requests are a 413 naming BATCH_MAX_REQUESTS, nothing runs', async (t) => {
  await withWorker(t);
  const requests: BatchRequest[] = [
    { id: 'canary', method: 'POST', url: 'Companies', body: { Name: 'Canary 1001' } },
    ...Array.from({ length: 1000 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: 'Countries/$count' })),
  ];
  const res = await sendBatch(stack, requests);
  t.is(res.status, 413, res.text.slice(0, 500));
  t.like(res.body as object, { type: 'about:blank', title: 'Payload Too Large', status: 413 });
  t.regex((res.body as { detail?: string }).detail ?? '', /BATCH_MAX_REQUESTS/);
  t.is(await countRows(stack, 'companies', { name: 'Canary 1001' }), 0);
});

test.serial(
  'at the default limits: a batch of several MiB (over the 1 MiB of a single request) is accepted',
  async (t) => {
    await withWorker(t);
    const website = `https://example.com/${'w'.repeat(1950)}`;
    const requests: BatchRequest[] = Array.from({ length: 1000 }, (_, i) => ({
      id: `c${i}`,
      atomicityGroup: 'big',
      method: 'POST',
      url: 'Companies',
      body: { Name: `Big ${i}`, Website: website },
    }));
    const raw = JSON.stringify({ requests });
    t.true(raw.length > 1.5 * 1024 * 1024, `${raw.length} bytes`);
    const res = await stack.request('POST', '/$batch', { raw, headers: { 'content-type': 'application/json' } });
    const responses = responsesOf(res, requests);
    t.deepEqual([...new Set(responses.map((r) => r.status))], [201]);
    t.is((await companies('Big ')).length, 1000);
  },
);

test.serial(
  'Idempotency-Key: a repeat answers the first answer and applies nothing; another body is 409',
  async (t) => {
    await withWorker(t);
    const key = { 'idempotency-key': 'batch-idem-1' };
    const requests: BatchRequest[] = [
      { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Idem A' } },
      {
        id: 's1',
        atomicityGroup: 'g',
        method: 'POST',
        url: 'Schemes',
        headers: { prefer: 'return=representation' },
        body: { SchemeName: 'Idem scheme', Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }] },
      },
      { id: 'l1', method: 'POST', url: 'Companies', body: { Name: 'Idem B' } },
      { id: 'bad', method: 'POST', url: 'Companies', body: {} },
      {
        id: 'list',
        method: 'GET',
        url: `Companies?$filter=${encodeURIComponent("startswith(Name,'Idem ')")}&$count=true`,
      },
    ];
    const first = await sendBatch(stack, requests, key);
    const firstResponses = responsesOf(first, requests);
    t.deepEqual(
      firstResponses.map((r) => r.status),
      [201, 201, 201, 400, 200],
    );
    const counts = async () => [
      await countRows(stack, 'companies', { name: 'Idem A' }),
      await countRows(stack, 'companies', { name: 'Idem B' }),
      await countRows(stack, 'schemes', { scheme_name: 'Idem scheme' }),
    ];
    t.deepEqual(await counts(), [1, 1, 1]);
    // A change after the first answer: the repeat's GET still answers what it first read.
    t.is((await stack.request('POST', '/Companies', { body: { Name: 'Idem later' } })).status, 201);
    const events = await countRows(stack, 'outbox', {});

    // The repeat, with the members of the body in another order: the same answer, nothing applied.
    const reordered = requests.map((r) => Object.fromEntries(Object.entries(r).reverse()) as unknown as BatchRequest);
    for (const body of [requests, reordered]) {
      const again = await sendBatch(stack, body, key);
      t.is(again.status, 200, again.text);
      t.deepEqual(again.body, first.body);
    }
    t.deepEqual(await counts(), [1, 1, 1]);
    t.is(await countRows(stack, 'outbox', {}), events, 'no event either');

    const other = requests.map((r) => (r.id === 'l1' ? { ...r, body: { Name: 'Idem C' } } : r));
    const conflict = await sendBatch(stack, other, key);
    t.is(conflict.status, 409, conflict.text);
    t.is(conflict.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.like(conflict.body as object, { type: 'about:blank', title: 'Conflict', status: 409 });
    t.regex((conflict.body as { detail?: string }).detail ?? '', /Idempotency-Key.*different request/);
    t.is(await countRows(stack, 'companies', { name: 'Idem C' }), 0);
    t.deepEqual(await counts(), [1, 1, 1]);

    // Another key is another batch: applied again.
    const fresh = responsesOf(await sendBatch(stack, requests, { 'idempotency-key': 'batch-idem-2' }), requests);
    t.is(fresh[0]!.status, 201);
    t.not(createdId(fresh[0]!), createdId(firstResponses[0]!));
    t.deepEqual(await counts(), [2, 2, 2]);
  },
);

test.serial(
  'Idempotency-Key: one key for a lone write and for a batch is a 409 either way, nothing applied',
  async (t) => {
    await withWorker(t);
    const single = { 'idempotency-key': 'shared-with-a-write' };
    t.is((await stack.request('POST', '/Companies', { body: { Name: 'Keyed alone' }, headers: single })).status, 201);
    const batchAfter = await sendBatch(
      stack,
      [{ id: 'c', method: 'POST', url: 'Companies', body: { Name: 'Keyed in a batch' } }],
      single,
    );
    t.is(batchAfter.status, 409, batchAfter.text);
    t.like(batchAfter.body as object, { title: 'Conflict', status: 409 });

    const batched = { 'idempotency-key': 'shared-with-a-batch' };
    const first = await sendBatch(
      stack,
      [{ id: 'c', method: 'POST', url: 'Companies', body: { Name: 'Keyed batch' } }],
      batched,
    );
    t.is(first.status, 200, first.text);
    const aloneAfter = await stack.request('POST', '/Companies', { body: { Name: 'Keyed alone 2' }, headers: batched });
    t.is(aloneAfter.status, 409, aloneAfter.text);
    t.like(aloneAfter.body as object, { title: 'Conflict', status: 409 });
    t.is(await countRows(stack, 'companies', { name: 'Keyed in a batch' }), 0);
    t.is(await countRows(stack, 'companies', { name: 'Keyed alone 2' }), 0);
    t.is(await countRows(stack, 'companies', { name: 'Keyed batch' }), 1);
  },
);

test.serial(
  'Idempotency-Key: two different batches sent at once under one key: one applies, the other is 409',
  async (t) => {
    await withWorker(t);
    for (let round = 0; round < 4; round++) {
      const key = { 'idempotency-key': `batch-race-${round}` };
      const send = (name: string) =>
        sendBatch(stack, [{ id: 'c', method: 'POST', url: 'Companies', body: { Name: name } }], key);
      const results = await Promise.all([send(`Race A ${round}`), send(`Race B ${round}`)]);
      t.deepEqual(results.map((r) => r.status).sort(), [200, 409], results.map((r) => r.text).join('\n'));
      const names = await stack.knex('companies').whereLike('name', `Race _ ${round}`).pluck('name');
      t.is(names.length, 1, JSON.stringify(names));
    }
  },
);

test.serial('concurrent groups writing the same rows in opposite orders all apply', async (t) => {
  await withWorker(t);
  const a = (await batch(stack, [{ id: 'a', method: 'POST', url: 'Companies', body: { Name: 'Contended A' } }]))[0]!;
  const b = (await batch(stack, [{ id: 'b', method: 'POST', url: 'Companies', body: { Name: 'Contended B' } }]))[0]!;
  const [idA, idB] = [createdId(a), createdId(b)];
  const rename = (id: string, name: string): BatchRequest => ({
    id: `${id}-${name}`,
    atomicityGroup: 'g',
    method: 'PATCH',
    url: `Companies/${id}`,
    headers: { 'content-type': 'application/json-patch+json' },
    body: [{ op: 'add', path: '/RegistrationNumber', value: name }],
  });
  const runs = Array.from({ length: 6 }, (_, i) =>
    batch(stack, i % 2 ? [rename(idA, `r${i}`), rename(idB, `r${i}`)] : [rename(idB, `r${i}`), rename(idA, `r${i}`)]),
  );
  for (const responses of await Promise.all(runs)) {
    t.deepEqual(
      responses.map((r) => r.status),
      [204, 204],
    );
  }
  for (const id of [idA, idB]) t.is((await stack.get(`/Companies/${id}`)).headers.get('etag'), '"7"');
});

test.serial(
  'a batch outliving BATCH_TIMEOUT_MS: 202 + /Commands/<id>, then Succeeded with the responses',
  async (t) => {
    const worker = await startPausedWorker(t, slow, 3000);
    const requests: BatchRequest[] = [
      { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Late Co' } },
      {
        id: 's1',
        atomicityGroup: 'g',
        method: 'POST',
        url: 'Schemes',
        body: { SchemeName: 'Late scheme', Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }] },
      },
    ];
    const accepted = await sendBatch(slow, requests);
    t.is(accepted.status, 202, accepted.text);
    const location = accepted.headers.get('location') ?? '';
    t.regex(location, /^\/Commands\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const commandId = location.slice('/Commands/'.length);
    t.deepEqual(accepted.body, { Id: commandId, State: 'Pending' });

    // Held before its commit: still Pending, nothing written.
    await waitForOutput(worker, () => worker.pauses() >= 1, 'worker pause');
    t.deepEqual((await slow.get(location)).body, { Id: commandId, State: 'Pending' });
    t.is(await countRows(slow, 'companies', { name: 'Late Co' }), 0);

    const done = await waitFor(async () => {
      const res = await slow.get(location);
      if (res.status !== 200) throw new Error(`GET ${location} answered ${res.status}: ${res.text}`);
      const body = res.body as { State: string };
      return body.State === 'Pending' ? undefined : (res.body as Record<string, unknown>);
    }, 20_000);
    t.like(done, { Id: commandId, State: 'Succeeded' });
    // The group was logged as the batch's unit 0.
    t.deepEqual(await slow.knex('command_log').whereLike('command_id', `${commandId}/%`).pluck('command_id'), [
      `${commandId}/0`,
    ]);
    const responses = (done.Response as { responses?: BatchResponse[] } | undefined)?.responses ?? [];
    t.deepEqual(
      responses.map((r) => [r.id, r.status]),
      [
        ['c1', 201],
        ['s1', 201],
      ],
    );
    const [company, scheme] = responses.map(createdId);
    t.is(await countRows(slow, 'companies', { name: 'Late Co' }), 1);
    const got = await slow.get(headerOf(responses[1]!, 'location')!);
    t.like(got.body as object, { Id: scheme, SchemeName: 'Late scheme' });
    const expanded = await slow.get(`/Schemes/${scheme}?$expand=Companies`);
    t.deepEqual(
      ((expanded.body as { Companies: { Company: { Id: string } }[] }).Companies ?? []).map((c) => c.Company.Id),
      [company],
    );
  },
);

/** One outbox event and, once recorded, one activity entry for each entity. */
async function assertOneEventAndActivityEach(t: ExecutionContext, ids: readonly string[]) {
  for (const id of ids) {
    const events = await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [id]);
    t.is(events.length, 1, `one event for ${id}`);
  }
  await waitFor(async () => {
    const n = Number(
      ((await stack.knex('activities').whereIn('entity_id', ids).count({ n: '*' }).first()) as { n: string }).n,
    );
    return n >= ids.length;
  }, 20_000);
  for (const id of ids) t.is(await countRows(stack, 'activities', { entity_id: id }), 1, `one activity for ${id}`);
}

test.serial('a worker killed before the commit of a group: the recovered job applies the group once', async (t) => {
  const worker = await startPausedWorker(t, stack, 60_000, true);
  const requests: BatchRequest[] = [
    { id: 'a1', atomicityGroup: 'g', method: 'POST', url: 'Addresses', body: { AddressLine: 'Killed line' } },
    {
      id: 's1',
      atomicityGroup: 'g',
      method: 'POST',
      url: 'Schemes',
      body: { SchemeName: 'Killed scheme', Address: { Id: '$a1' } },
    },
    { id: 'c1', atomicityGroup: 'g', method: 'POST', url: 'Companies', body: { Name: 'Killed Co' } },
  ];
  const response = sendBatch(stack, requests); // answered once another worker has recovered the job
  await killAtPause(worker, 1, 'worker pause');
  t.is(await countRows(stack, 'addresses', { address_line: 'Killed line' }), 0, 'nothing committed by the dead worker');
  t.is(await countRows(stack, 'companies', { name: 'Killed Co' }), 0);

  await startRecoveringWorker(t);
  const notifications = await startNotificationsWorker(stack.config);
  t.teardown(() => notifications.close());
  const r = byId(responsesOf(await response, requests));
  t.deepEqual(
    Object.values(r).map((x) => x.status),
    [201, 201, 201],
  );
  t.is(await countRows(stack, 'addresses', { address_line: 'Killed line' }), 1, 'applied exactly once');
  t.is(await countRows(stack, 'schemes', { scheme_name: 'Killed scheme' }), 1);
  t.is(await countRows(stack, 'companies', { name: 'Killed Co' }), 1);
  const [address, scheme, company] = createdIds(r, ['a1', 's1', 'c1']);
  const row = (await stack.knex('schemes').where({ encoded_id: scheme }).first()) as { address_id: number };
  t.is(encodeId('Address', row.address_id), address);
  await assertOneEventAndActivityEach(t, [address, scheme, company]);
});

test.serial(
  'a worker killed in its second group: the first is replayed from the log, the second applied once',
  async (t) => {
    // Each group is held 3 s before its commit: the first commits, the kill lands in the second's hold.
    const worker = await startPausedWorker(t, stack, 3000, true);
    const requests: BatchRequest[] = [
      { id: 'c1', atomicityGroup: 'first', method: 'POST', url: 'Companies', body: { Name: 'Replayed Co' } },
      { id: 'c2', atomicityGroup: 'first', method: 'POST', url: 'Companies', body: { Name: 'Replayed Co 2' } },
      { id: 'a1', atomicityGroup: 'second', method: 'POST', url: 'Addresses', body: { AddressLine: 'Replayed line' } },
      {
        id: 's1',
        atomicityGroup: 'second',
        dependsOn: ['first'],
        method: 'POST',
        url: 'Schemes',
        body: {
          SchemeName: 'Replayed scheme',
          Address: { Id: '$a1' },
          Companies: [{ Company: { Id: '$c1' }, Role: 'Developer' }],
        },
      },
    ];
    const response = sendBatch(stack, requests);
    await killAtPause(worker, 2, 'second pause');
    t.is(await countRows(stack, 'companies', { name: 'Replayed Co' }), 1, 'the first group committed');
    t.is(await countRows(stack, 'addresses', { address_line: 'Replayed line' }), 0, 'the second did not');

    await startRecoveringWorker(t);
    const notifications = await startNotificationsWorker(stack.config);
    t.teardown(() => notifications.close());
    const r = byId(responsesOf(await response, requests));
    t.deepEqual(
      Object.values(r).map((x) => x.status),
      [201, 201, 201, 201],
    );
    const rows = await companies('Replayed Co');
    t.is(rows.length, 2, 'the first group was not applied again');
    t.deepEqual(
      [createdId(r.c1!), createdId(r.c2!)],
      rows.map((row) => encodeId('Company', row.id)),
      'its answers are the recorded ones',
    );
    t.is(await countRows(stack, 'addresses', { address_line: 'Replayed line' }), 1);
    t.is(await countRows(stack, 'schemes', { scheme_name: 'Replayed scheme' }), 1);
    const ids = createdIds(r, ['c1', 'c2', 'a1', 's1']);
    await assertOneEventAndActivityEach(t, ids);
  },
);

test.serial('a recovered batch answers its GETs as they read before the later writes, not after', async (t) => {
  // Held 3 s before each commit; the kill lands in the third: the group, then the PATCH, committed.
  const worker = await startPausedWorker(t, stack, 3000, true);
  const requests: BatchRequest[] = [
    { id: 'c1', atomicityGroup: 'first', method: 'POST', url: 'Companies', body: { Name: 'Read before rename' } },
    { id: 'in-group', atomicityGroup: 'first', method: 'GET', url: '$c1' },
    { id: 'alone', dependsOn: ['c1'], method: 'GET', url: '$c1' },
    {
      id: 'rename',
      dependsOn: ['c1'],
      method: 'PATCH',
      url: '$c1',
      headers: { 'content-type': 'application/json-patch+json' },
      body: [{ op: 'replace', path: '/Name', value: 'Read after rename' }],
    },
    { id: 'last', atomicityGroup: 'closing', method: 'POST', url: 'Companies', body: { Name: 'Read last' } },
  ];
  const response = sendBatch(stack, requests);
  await killAtPause(worker, 3, 'third pause');
  t.is(await countRows(stack, 'companies', { name: 'Read after rename' }), 1, 'the rename committed');
  t.is(await countRows(stack, 'companies', { name: 'Read last' }), 0, 'the last group did not');

  await startRecoveringWorker(t);
  const r = byId(responsesOf(await response, requests));
  t.deepEqual(
    Object.values(r).map((x) => x.status),
    [201, 200, 200, 204, 201],
  );
  const seen = (x: BatchResponse) => [(x.body as { Name?: string }).Name, headerOf(x, 'etag')];
  t.deepEqual(
    [seen(r['in-group']!), seen(r.alone!)],
    [
      ['Read before rename', '"1"'],
      ['Read before rename', '"1"'],
    ],
  );
  t.is(headerOf(r.rename!, 'etag'), '"2"');
  t.is(await countRows(stack, 'companies', { name: 'Read last' }), 1);
});
