import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Processor } from 'bullmq';
import { QueueWorker } from '../../workers/shared/queue-worker';
import { createRedis, quitRedis, withBullConnection, type RedisClient } from '../../infra/redis';
import type { RedisTarget } from '../../infra/config/load-config';
import { openQueue } from '../../infra/queues';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { CuttableProxy } from '../support/cuttable-proxy';
import { eventually } from '../support/queues';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

/**
 * A worker's close() returns while its Redis is unreachable (workers/shared/queue-worker.ts). A
 * plain BullMQ Worker's never does once its connections wait to reconnect (BullMQ #4656): the
 * process, or a test stack, then hangs on shutdown. One Redis is cut through a proxy; a Redis
 * Cluster of this file's own has every node stopped.
 */

let proxy: CuttableProxy;
let cluster: RedisCluster | undefined;
test.before(async () => {
  proxy = new CuttableProxy(new URL(process.env.REDIS_URL!));
  await proxy.open();
});
/** Every worker a test made, closed again after all (a test that failed before its own close would leave it retrying). */
const made: QueueWorker[] = [];
test.after.always(async () => {
  await Promise.allSettled(made.map((w) => w.close(true)));
  await proxy?.cut();
  await cluster?.stop();
});

const proxied = (): RedisTarget => ({ url: `redis://127.0.0.1:${proxy.port}` });

/** Each test's queue has a prefix of its own. */
function worker(target: RedisTarget, prefix: string, processor: Processor, options = {}): QueueWorker {
  const created = withBullConnection(
    target,
    'worker',
    (connection) => new QueueWorker(QUEUE.notifications, processor, { connection, prefix, ...options }),
  );
  created.on('error', () => undefined);
  made.push(created);
  return created;
}

/** The workers' queue on the suite's Redis itself, never through a proxy: to add jobs and read their state. */
function directQueue(prefix: string) {
  return openQueue(
    { redis: { url: process.env.REDIS_URL! }, queuePrefix: prefix },
    QUEUE.notifications,
    { own: 'worker' },
    () => undefined,
  );
}

async function statuses(w: QueueWorker): Promise<string[]> {
  const clients = (await Promise.all([w.backend.client, w.backend.blockingClient])) as unknown as RedisClient[];
  return clients.map((client) => client.status);
}

/** The blocking connection waits to reconnect: a plain Worker's close() would wait for its 'end' forever. */
const stuck = ([, blocking]: string[]) => blocking === 'reconnecting';

test.serial('an idle worker whose Redis is unreachable closes, and ends its connections', async (t) => {
  t.timeout(20_000, 'close() never returned');
  const w = worker(proxied(), `close-${randomUUID()}`, async () => 'done');
  await w.waitUntilReady();
  await proxy.cut();
  await eventually(async () => stuck(await statuses(w)));
  await w.close();
  t.deepEqual(await statuses(w), ['end', 'end']);
  await proxy.open();
});

test.serial('a worker whose Redis never answered closes', async (t) => {
  t.timeout(20_000, 'close() never returned');
  await proxy.cut();
  try {
    // Its connections never become ready: BullMQ's handles on them stay pending, and so did its close.
    const w = worker(proxied(), `close-${randomUUID()}`, async () => 'done');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await w.close();
    t.pass('close() returned');
  } finally {
    await proxy.open();
  }
});

test.serial(
  'a job running when Redis goes away: close() waits for it, returns, and the job runs again as stalled',
  async (t) => {
    t.timeout(30_000, 'close() never returned');
    const prefix = `close-${randomUUID()}`;
    const runs: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const lease = { lockDuration: 1_000, stalledInterval: 500 };
    const first = worker(
      proxied(),
      prefix,
      async (job) => {
        runs.push(`first:${job.id}`);
        started();
        await new Promise((resolve) => setTimeout(resolve, 500));
        return 'first';
      },
      lease,
    );
    await first.waitUntilReady();
    const queue = directQueue(prefix);
    try {
      const job = await queue.add('work', {}, { jobId: 'only' });
      await running;
      await proxy.cut();
      await eventually(async () => stuck(await statuses(first)));
      await first.close();
      t.deepEqual(runs, ['first:only'], 'the running job finished its processor before close() returned');
      t.is(await job.getState(), 'active', 'its completion never reached Redis');
      await proxy.open();
      const second = worker(
        proxied(),
        prefix,
        async (again) => {
          runs.push(`second:${again.id}`);
          return 'second';
        },
        lease,
      );
      try {
        await eventually(async () => (await queue.getJob('only'))?.returnvalue === 'second', 15_000);
        t.deepEqual(runs, ['first:only', 'second:only']);
      } finally {
        await second.close();
      }
    } finally {
      await queue.close();
    }
  },
);

test.serial('a worker on a Redis Cluster whose every node is down closes', async (t) => {
  t.timeout(60_000, 'close() never returned');
  cluster = await startRedisCluster();
  const target = { clusterNodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) };
  const w = worker(target, `{close-${randomUUID()}}`, async () => 'done');
  await w.waitUntilReady();
  await Promise.all(cluster.ports.map((port) => cluster!.stopNode(port)));
  await eventually(async () => stuck(await statuses(w)), 30_000);
  await w.close();
  const [client, blocking] = await statuses(w);
  t.is(blocking, 'end');
  t.true(client === 'end' || client === 'disconnecting', client);
});

test.serial('a Redis that stops answering: an idle worker and a queue close after their goodbye wait', async (t) => {
  t.timeout(20_000, 'close() never returned');
  const stalled = new CuttableProxy(new URL(process.env.REDIS_URL!));
  await stalled.open();
  t.teardown(() => stalled.cut());
  const target = { url: `redis://127.0.0.1:${stalled.port}` };
  const w = worker(target, `close-${randomUUID()}`, async () => 'done');
  const queue = openQueue(
    { redis: target, queuePrefix: `close-${randomUUID()}` },
    QUEUE.views,
    { own: 'worker' },
    () => undefined,
  );
  await Promise.all([w.waitUntilReady(), queue.waitUntilReady()]);
  // Redis's answers, QUIT's among them, no longer arrive; the connections stay open. A plain
  // BullMQ close waits for QUIT's answer forever.
  stalled.silent = true;
  const started = Date.now();
  await Promise.all([w.close(), queue.close()]);
  t.true(Date.now() - started >= 1_500, 'each waited for its goodbye first');
  t.deepEqual(await statuses(w), ['end', 'end']);
  t.is(((await queue.backend.client) as unknown as RedisClient).status, 'end');
});

test.serial('a job running at close on a healthy Redis: its completion is recorded, however long it ran', async (t) => {
  t.timeout(30_000, 'close() never returned');
  const prefix = `close-${randomUUID()}`;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  // Longer than a closing worker's goodbye wait, which must not start while a job runs.
  const w = worker({ url: process.env.REDIS_URL! }, prefix, async () => {
    started();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return 'finished';
  });
  await w.waitUntilReady();
  const queue = directQueue(prefix);
  try {
    const job = await queue.add('work', {}, { jobId: 'long' });
    await running;
    await w.close();
    t.is(await job.getState(), 'completed');
    t.is((await queue.getJob('long'))?.returnvalue, 'finished');
    t.deepEqual(await statuses(w), ['end', 'end']);
  } finally {
    await queue.close();
  }
});

test.serial('a Redis that stops answering: quitRedis returns after its wait and ends the client', async (t) => {
  t.timeout(20_000, 'quitRedis never returned');
  const stalled = new CuttableProxy(new URL(process.env.REDIS_URL!));
  await stalled.open();
  t.teardown(() => stalled.cut());
  const client = createRedis({ url: `redis://127.0.0.1:${stalled.port}` }, 'producer');
  client.on('error', () => undefined);
  await new Promise((resolve) => client.once('ready', resolve));
  t.is(await client.ping(), 'PONG');
  // Redis's answers, QUIT's among them, no longer arrive; the connection stays open.
  stalled.silent = true;
  const started = Date.now();
  await quitRedis(client);
  t.true(Date.now() - started >= 1_500, 'it waited for the answer first');
  await eventually(async () => client.status === 'end', 5_000);
});
