import test from 'ava';
import { eventually } from '../support/queues';
import { startRedisSentinel, type RedisSentinel } from '../support/redis-sentinel';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { spawnWorkerProcesses, type WorkerProcesses } from '../support/worker-processes';
import { create } from '../support/writes';

/**
 * Published events survive a Sentinel failover (DESIGN §14, REDIS_WAIT_REPLICAS). Redis replicates
 * asynchronously: a burst the primary accepted but had not yet sent to its replica is gone once
 * that replica is promoted. The outbox marks events published only when a replica acknowledged
 * them (WAIT), so what a failover lost is still unpublished and the sweep publishes it again to the
 * new primary. Without the wait (REDIS_WAIT_REPLICAS=0) the rows are marked at once and the
 * activity below never comes.
 */

/** For the API and the worker processes alike. */
const DURABILITY = { REDIS_WAIT_TIMEOUT_MS: '200' };

let sentinel: RedisSentinel;
let stack: Stack;
const processes: WorkerProcesses[] = [];

test.before(async () => {
  sentinel = await startRedisSentinel('emapi-durable');
  stack = await startStack({
    env: {
      REDIS_SENTINELS: sentinel.sentinels,
      REDIS_SENTINEL_NAME: sentinel.name,
      ...DURABILITY,
    },
    // Workers as processes (killed at the end: an in-process BullMQ worker closed while its
    // connection backs off after the failover waits for the reconnect). No notification worker
    // yet: the bursts wait in the primary's queue, as they would under load.
    workers: [],
  });
  processes.push(spawnWorkerProcesses(workerProcessEnv(stack, DURABILITY), ['commands']));
});

test.after.always(async () => {
  processes.forEach((running) => running.kill());
  await stack?.close();
  await sentinel?.stop();
});

/** When the outbox marked the entity's events published (null: not yet), one entry per event. */
async function publishedAt(entityId: string): Promise<(Date | null)[]> {
  const rows = (await stack.knex('outbox').whereRaw(`event->>'entityId' = ?`, [entityId]).select('published_at')) as {
    published_at: Date | null;
  }[];
  return rows.map((row) => row.published_at);
}

async function activitiesOf(entityId: string): Promise<string[]> {
  const res = await stack.get(`/Activities?$filter=${encodeURIComponent(`EntityId eq '${entityId}'`)}`);
  return (res.body as { EventType: string }[]).map((activity) => activity.EventType);
}

test.serial('sentinel defaults to waiting for one replica', (t) => {
  t.deepEqual(stack.config.redisDurability, { replicas: 1, timeoutMs: 200 });
});

test.serial('events the replica holds are marked published', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Replicated Estates' });
  const marks = await eventually(async () => {
    const at = await publishedAt(id);
    return at.length > 0 && at.every((mark) => mark !== null) ? at : undefined;
  }, 30_000);
  t.is(marks.length, 1);
});

test.serial(
  'events the replica never received stay unpublished and reach the new primary after a failover',
  async (t) => {
    const held = await sentinel.holdReplica();
    let released = false;
    try {
      const id = await create(stack, 'Companies', { Name: 'Unreplicated Holdings' });
      // The primary has the burst; its replica does not. Several publishes and sweeps later the row
      // is still unpublished: nothing marks what no replica acknowledged.
      await eventually(
        async () => (await stack.knex('outbox').whereNull('published_at').count({ n: '*' }))[0]!.n !== '0',
      );
      await new Promise((resolve) => setTimeout(resolve, 3000));
      t.deepEqual(await publishedAt(id), [null], 'not marked published without a replica holding it');

      const { port, release } = await sentinel.killPrimary();
      held.release();
      release();
      released = true;
      await sentinel.failedOverFrom(port);

      // The promoted replica never received the burst. The sweep publishes the row again there, and a
      // notification worker started now records the activity.
      processes.push(spawnWorkerProcesses(workerProcessEnv(stack, DURABILITY), ['notifications']));
      t.deepEqual(
        await eventually(async () => {
          const types = await activitiesOf(id);
          return types.length ? types : undefined;
        }, 60_000),
        ['CompanyCreated'],
      );
      // Writes go on through the promoted replica.
      const after = await eventually(async () => {
        const res = await stack.request('POST', '/Companies', { body: { Name: 'After the failover' } });
        return res.status === 201 ? res : undefined;
      }, 60_000);
      t.is(after.status, 201);
      // The new primary has no replica left (its old primary is dead): still not acknowledged, so
      // still unpublished, and published again by every sweep until a replica holds it.
      t.deepEqual(await publishedAt(id), [null]);
    } finally {
      if (!released) held.release();
    }
  },
);
