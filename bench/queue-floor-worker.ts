import { Worker } from 'bullmq';
import { publishReply } from '../infra/command-replies';
import { createRedis } from '../infra/redis';
import { QUEUE_FLOOR } from './queue-floor-contract';
import { applyDesignFloorJob, designFloorPool, type DesignFloorJob } from './design-floor-writes';

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
let next = 0;
const worker = new Worker(
  QUEUE_FLOOR.name,
  async (job) => {
    let result;
    if (job.name === 'design') {
      if (!pool) throw new Error('the design floor needs DATABASE_URL');
      result = await applyDesignFloorJob(pool, job.data as DesignFloorJob);
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
  () => void worker.close().then(() => Promise.allSettled([redis.quit(), pool?.end()]).finally(() => process.exit(0))),
);
