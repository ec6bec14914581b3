import { Worker } from 'bullmq';
import { publishReply } from '../infra/command-replies';
import { createRedis } from '../infra/redis';
import { QUEUE_FLOOR } from './queue-floor-contract';
import { applyDesignFloorJob, designFloorPool, type DesignFloorJob, type FloorEventSink } from './design-floor-writes';
import { settleCommand } from '../infra/pending-commands';
import { createKnex } from '../db/knex';
import { createLogger } from '../infra/logger';
import { OutboxPublisher } from '../workers/commands/outbox-publisher';
import { FLOOR_SUBJECT, fullDesignFloor } from './queue-floor-contract';

/**
 * The worker of the queue floors, with the command worker's concurrency (WORKER_CONCURRENCY,
 * default 16), replying to the HTTP side as the command worker replies to the API
 * (infra/command-replies.ts). A `roundtrip` job completes at once with a result the size of a
 * command's (the bare round trip: no database); a `design` job applies its write in the one
 * transaction the design requires (bench/design-floor-writes.ts), on DATABASE_URL. A process of
 * its own, like the command worker. Started by bench/run.ts.
 */

const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 16);
const redis = createRedis({ url: process.env.REDIS_URL! }, 'worker');
const pool = process.env.DATABASE_URL ? designFloorPool(process.env.DATABASE_URL, concurrency) : null;
/**
 * The complete design floor (DESIGN_FLOOR_FULL=1, `fullDesignFloor`): each design job's event is
 * published after commit by the service's own OutboxPublisher, to the service's queues
 * (DESIGN_FLOOR_QUEUE_PREFIX) with its publish window, where the service's view and notification
 * workers handle it; and the job's admission is settled as the command worker settles a command's.
 */
const full = fullDesignFloor();
const logger = createLogger('design floor', 'warn');
const eventKnex = full && process.env.DATABASE_URL ? createKnex(process.env.DATABASE_URL, 2, logger) : null;
const publisher =
  full && eventKnex
    ? new OutboxPublisher({
        knex: eventKnex,
        redis: { url: process.env.REDIS_URL! },
        queuePrefix: full.queuePrefix,
        logger,
        publishWindowMs: full.publishWindowMs,
      })
    : null;
const events: FloorEventSink | undefined = publisher ? (event) => publisher.publishSoon([event]) : undefined;
let next = 0;
const worker = new Worker(
  QUEUE_FLOOR.name,
  async (job) => {
    let result;
    if (job.name === 'design') {
      if (!pool) throw new Error('the design floor needs DATABASE_URL');
      result = await applyDesignFloorJob(pool, job.data as DesignFloorJob, events);
      if (full) void settleCommand(redis, QUEUE_FLOOR.prefix, FLOOR_SUBJECT, job.id!).catch(() => undefined);
    } else {
      next += 1;
      result = { ok: true, entity: 'Scheme', dbId: next, encodedId: `SCH-${next}`, version: 1 };
    }
    void publishReply(redis, QUEUE_FLOOR.prefix, { jobId: job.id!, result }).catch(() => undefined);
    return result;
  },
  {
    connection: { url: process.env.REDIS_URL!, maxRetriesPerRequest: null },
    prefix: QUEUE_FLOOR.prefix,
    concurrency,
  },
);

// A design job whose scheme is gone fails; the HTTP side answers 404 from the reply.
worker.on('failed', (job, err) => {
  if (job)
    void publishReply(redis, QUEUE_FLOOR.prefix, { jobId: job.id!, failedReason: err.message }).catch(() => undefined);
});

void worker.waitUntilReady().then(() => console.log('queue floor worker ready'));
process.on(
  'SIGTERM',
  () =>
    void worker
      .close()
      .then(() => Promise.allSettled([publisher?.close(), redis.quit(), pool?.end()]))
      .then(() => eventKnex?.destroy())
      .finally(() => process.exit(0)),
);
