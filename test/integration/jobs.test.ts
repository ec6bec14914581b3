import test from 'ava';
import { Queue, Worker, type Job } from 'bullmq';
import { createRedis, queuePrefix, type RedisClient } from '../../infra/redis';
import { REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';
import { startStack, type Stack } from '../support/stack';
import type { JobEntry } from '../../api/jobs/job-entry';

/**
 * /Jobs over the real BullMQ queues (mock Admin, no workers running): jobs are moved through their
 * states by hand with a manual worker, so every state is observed without waiting on timers.
 */

type Entry = JobEntry;

let stack: Stack;
let connection: RedisClient;
const queues: Queue[] = [];
const workers: Worker[] = [];

test.before(async () => {
  stack = await startStack({ workers: [] });
  connection = createRedis(stack.config.redis, 'worker');
});
test.after.always(async () => {
  await Promise.allSettled([...workers, ...queues].map((q) => q.close()));
  connection?.disconnect();
  await stack?.close();
});

function queue(name: string): Queue {
  const q = new Queue(name, { connection, prefix: queuePrefix(stack.config, name) });
  queues.push(q);
  return q;
}

/** A worker that runs nothing by itself: the test takes jobs and finishes them explicitly. */
function manualWorker(name: string): Worker {
  const w = new Worker(name, null, { connection, prefix: queuePrefix(stack.config, name), autorun: false });
  workers.push(w);
  return w;
}

async function take(worker: Worker, token: string): Promise<Job> {
  const job = await worker.getNextJob(token, { block: false });
  if (!job) throw new Error('no job waiting');
  return job;
}

test.serial('POST /Jobs/RebuildViews queues a rebuild whose progress and outcome are visible', async (t) => {
  const started = await stack.request('POST', '/Jobs/RebuildViews');
  t.is(started.status, 202, started.text);
  const entry = started.body as Entry;
  t.like(entry, { Queue: 'views', Name: REBUILD_VIEWS_JOB, State: 'waiting', Attempts: 0, Progress: 0 });
  t.is(started.headers.get('location'), `/Jobs/views/${entry.Id}`);
  t.false(Number.isNaN(Date.parse(entry.CreatedAt!)));
  t.is(entry.ProcessedAt, null);

  const worker = manualWorker('views');
  const job = await take(worker, 'rebuild');
  t.is(job.id, entry.Id);
  // The request's origin rides along, so the views worker's log lines name the request.
  t.deepEqual(job.data, { requestedBy: 'mock-user', origin: { requestId: started.headers.get('x-request-id') } });
  await job.updateProgress(40);
  const running = (await stack.get(`/Jobs/views/${entry.Id}`)).body as Entry;
  t.like(running, { State: 'active', Progress: 40, Attempts: 1, FinishedAt: null });
  t.truthy(running.ProcessedAt);

  await job.updateProgress(100);
  await job.moveToCompleted({ rebuilt: true }, 'rebuild', false);
  const done = (await stack.get(`/Jobs/views/${entry.Id}`)).body as Entry;
  t.like(done, { State: 'completed', Progress: 100, FailedReason: null });
  t.truthy(done.FinishedAt);
});

test.serial('a failed job shows its reason and can be retried once failed, not otherwise', async (t) => {
  const notifications = queue('notifications');
  const added = await notifications.add('activity', { n: 1 });
  const worker = manualWorker('notifications');
  const job = await take(worker, 'fail-it');
  await job.moveToFailed(new Error('activity table unreachable'), 'fail-it', false);

  const failed = (await stack.get(`/Jobs/notifications/${added.id}`)).body as Entry;
  t.like(failed, { State: 'failed', FailedReason: 'activity table unreachable', Attempts: 1 });
  const listed = (await stack.get('/Jobs?state=failed')).body as Entry[];
  t.deepEqual(
    listed.map((e) => `${e.Queue}/${e.Id}`),
    [`notifications/${added.id}`],
  );

  const retried = await stack.request('POST', `/Jobs/notifications/${added.id}/retry`);
  t.is(retried.status, 202, retried.text);
  t.is(retried.headers.get('location'), `/Jobs/notifications/${added.id}`);
  t.like(retried.body as object, { State: 'waiting', Id: added.id });

  const again = await stack.request('POST', `/Jobs/notifications/${added.id}/retry`);
  t.is(again.status, 409);
  t.like(again.body as object, { title: 'Conflict', status: 409 });
  t.regex((again.body as { detail: string }).detail, /is waiting: only failed jobs can be retried/);
});

test.serial('listing: newest first across queues, filtered by queue and state, paged by $top/$skip', async (t) => {
  const commands = queue('commands');
  const ids: string[] = [];
  for (let i = 1; i <= 7; i++) ids.push((await commands.add(`command-${i}`, { i })).id!);
  const newestFirst = [...ids].reverse();

  const pages: string[] = [];
  for (let skip = 0; skip < 9; skip += 3) {
    const res = await stack.get(`/Jobs?queue=commands&$top=3&$skip=${skip}`);
    t.is(res.status, 200);
    const page = res.body as Entry[];
    t.true(page.every((e) => e.Queue === 'commands' && e.State === 'waiting'));
    pages.push(...page.map((e) => e.Id));
  }
  t.deepEqual(pages, newestFirst);

  const counted = await stack.get('/Jobs?queue=commands&$count=true&$top=1');
  t.is(counted.headers.get('x-total-count'), '7');
  t.is((counted.body as Entry[]).length, 1);

  const everything = (await stack.get('/Jobs')).body as Entry[];
  t.deepEqual([...new Set(everything.map((e) => e.Queue))].sort(), ['commands', 'notifications', 'views']);
  const times = everything.map((e) => Date.parse(e.FinishedAt ?? e.ProcessedAt ?? e.CreatedAt!));
  t.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
  );

  t.deepEqual((await stack.get('/Jobs?queue=views&state=waiting')).body, []);
  const views = (await stack.get('/Jobs?queue=views')).body as Entry[];
  t.true(views.length >= 1 && views.every((e) => e.Queue === 'views'));
  t.deepEqual((await stack.get('/Jobs?$top=0')).body, []);
});

test('bad listing parameters are 400 problems', async (t) => {
  for (const query of [
    'queue=bogus',
    'state=finished',
    '$top=-1',
    '$top=abc',
    '$top=100000',
    '$skip=9999&$top=50',
    '$count=maybe',
    'limit=5',
    '$filter=x',
  ]) {
    const res = await stack.get(`/Jobs?${query}`);
    t.is(res.status, 400, query);
    t.like(res.body as object, { type: 'about:blank', title: 'Bad Request', status: 400 });
  }
});

test('unknown queues and jobs are 404 problems', async (t) => {
  for (const path of ['/Jobs/views/no-such-job', '/Jobs/bogus/1']) {
    const res = await stack.get(path);
    t.is(res.status, 404);
    t.like(res.body as object, { title: 'Not Found', status: 404 });
  }
  t.is((await stack.request('POST', '/Jobs/views/no-such-job/retry')).status, 404);
  const stray = await stack.get('/Jobs/RebuildViews');
  t.is(stray.status, 404);
  t.like(stray.body as object, { detail: 'No resource at GET /Jobs/RebuildViews.' });
});

test('Bull Board serves its UI and shows every queue', async (t) => {
  const page = await stack.get('/admin/queues');
  t.is(page.status, 200);
  t.regex(page.text, /<html/i);
  const api = await stack.get('/admin/queues/api/queues');
  t.is(api.status, 200);
  const names = (api.body as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
  t.deepEqual(names, ['commands', 'maintenance', 'notifications', 'views', 'webhooks']);
});
