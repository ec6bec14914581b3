import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { TestQueues, eventually } from '../support/queues';
import { create, patch } from '../support/writes';
import type { DomainEvent } from '../../domain/events/domain-event';
import { QUEUE, REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';

// Events end to end: writes through the real pipeline reach the search read model and the
// activity log; a view worker process killed mid-rebuild loses nothing.

let stack: Stack;
let queues: TestQueues;
test.before(async () => {
  // No in-process view worker: the search tests start real view worker processes of their own.
  stack = await startStack({
    workers: [(config) => startCommandWorker(config), startNotificationsWorker],
  });
  queues = new TestQueues(stack.config);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

type Doc = Record<string, unknown>;
const root = path.resolve(__dirname, '../../..');

function viewWorkerProcess(): ChildProcess {
  return spawn(process.execPath, [path.join(root, 'dist/workers/views/main.js')], {
    env: workerProcessEnv(stack, {
      LOG_LEVEL: 'warn',
      WORKER_CONCURRENCY: '4',
      // A killed worker's job is picked up again within a few seconds. The lock is renewed every
      // half lock duration: a live worker stalled longer than that (a loaded machine) loses it, and
      // a job that stalls twice fails for good, so the lock must not be too short either.
      WORKER_LOCK_DURATION_MS: '3000',
      WORKER_STALLED_INTERVAL_MS: '500',
    }),
    stdio: 'ignore',
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

async function searchNames(query: string): Promise<string[]> {
  const res = await stack.get(`/Schemes?$search=${encodeURIComponent(query)}`);
  return (res.body as Doc[]).map((d) => d.SchemeName as string);
}

test.serial('a write is searchable once its event is handled; a company rename re-indexes its schemes', async (t) => {
  const worker = viewWorkerProcess();
  try {
    const company = await create(stack, 'Companies', { Name: 'Quokka Ventures' });
    await create(stack, 'Schemes', {
      SchemeName: 'Harbour Lights',
      Companies: [{ Company: { Id: company }, Role: 'Developer' }],
    });
    // Includes the view worker process's start-up.
    await eventually(async () => (await searchNames('harbour lights')).length === 1, 20_000);
    t.deepEqual(await searchNames('quokka'), ['Harbour Lights']);

    const renamed = await patch(stack, `/Companies/${company}`, [
      { op: 'replace', path: '/Name', value: 'Wombat Capital' },
    ]);
    t.is(renamed.status, 204);
    await eventually(async () => (await searchNames('wombat')).length === 1, 10_000);
    t.deepEqual(await searchNames('wombat'), ['Harbour Lights']);
    t.deepEqual(await searchNames('quokka'), []);
  } finally {
    await stop(worker);
  }
});

test.serial('every write family leaves one activity per event, also when an event is delivered twice', async (t) => {
  const country = await create(stack, 'Countries', { Name: 'Portugal', IsoCode: 'PT' });
  await patch(stack, `/Countries/${country}`, [{ op: 'replace', path: '/Name', value: 'Portuguese Republic' }]);
  const company = await create(stack, 'Companies', { Name: 'Lynx Partners' });
  const put = await stack.request('PUT', `/Companies/${company}`, { body: { Name: 'Lynx Partners LLP' } });
  t.is(put.status, 204);
  const address = await create(stack, 'Addresses', { AddressLine: '9 Dock Road' });
  t.is((await stack.request('DELETE', `/Addresses/${address}`)).status, 204);

  const expected: [string, string][] = [
    [country, 'CountryCreated'],
    [country, 'CountryUpdated'],
    [company, 'CompanyCreated'],
    [company, 'CompanyUpdated'],
    [address, 'AddressCreated'],
    [address, 'AddressDeleted'],
  ];
  const activities = await eventually(async () => {
    const res = await stack.get(
      `/Activities?$filter=${encodeURIComponent(`EntityId in ('${country}','${company}','${address}')`)}&$top=100`,
    );
    const rows = res.body as Doc[];
    return rows.length >= expected.length ? rows : undefined;
  }, 10_000);
  t.deepEqual(activities.map((a) => [a.EntityId, a.EventType]).sort(), [...expected].sort());
  t.true(activities.every((a) => a.Subject === 'mock-user'));
  t.deepEqual(activities.find((a) => a.EventType === 'CountryUpdated')!.ChangedFields, ['Name']);

  // Redeliver one event as a second job: still one activity.
  const [outboxRow] = (await stack.knex('outbox').whereRaw(`event->>'entityId' = ?`, [company]).select('event')) as {
    event: { eventId: string; name: string };
  }[];
  await queues.deliverSingle(QUEUE.notifications, outboxRow!.event as DomainEvent, {
    jobId: `${outboxRow!.event.eventId}-again`,
  });
  const rows = await stack.knex('activities').where({ event_id: outboxRow!.event.eventId });
  t.is(rows.length, 1);
});

test.serial('a view worker killed mid-rebuild loses nothing: the restarted job finishes every document', async (t) => {
  // Enough rows that the rebuild takes several batches.
  const total = 12_000;
  for (let i = 0; i < total; i += 4000) {
    await stack.knex('companies').insert(Array.from({ length: 4000 }, (_, j) => ({ name: `Bulk Company ${i + j}` })));
  }
  await stack.knex('search_fields').where({ entity_type: 'Company' }).delete();

  const first = viewWorkerProcess();
  const events = await queues.queueEvents(QUEUE.views); // listening before the job can finish
  const job = await queues.queue(QUEUE.views).add(REBUILD_VIEWS_JOB, {}, { attempts: 3 });
  // Wait until the rebuild is under way (some batches saved), then kill the process outright.
  await eventually(async () => {
    const current = await queues.queue(QUEUE.views).getJob(job.id!);
    return (current?.data as { resume?: unknown })?.resume !== undefined;
  }, 15_000);
  await stop(first, 'SIGKILL');
  const indexedAtKill = Number(
    (
      (await stack.knex('search_fields').where({ entity_type: 'Company', field: 'Name' }).count('* as n')) as {
        n: number;
      }[]
    )[0]!.n,
  );

  const second = viewWorkerProcess();
  try {
    await job.waitUntilFinished(events, 60_000);
    const companies = Number(((await stack.knex('companies').count('* as n')) as { n: number }[])[0]!.n);
    const indexed = Number(
      (
        (await stack.knex('search_fields').where({ entity_type: 'Company', field: 'Name' }).count('* as n')) as {
          n: number;
        }[]
      )[0]!.n,
    );
    t.true(indexedAtKill < companies, `killed before the end (${indexedAtKill} of ${companies})`);
    t.is(indexed, companies);
    const found = await stack.get(`/Companies/$count?$search=${encodeURIComponent('"Bulk Company 11999"')}`);
    t.is(found.text, '1');
  } finally {
    await stop(second);
  }
});
