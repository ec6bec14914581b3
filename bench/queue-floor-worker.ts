import { Worker } from 'bullmq';
import { publishReply } from '../infra/command-replies';
import { createRedis } from '../infra/redis';
import { QUEUE_FLOOR } from './queue-floor-contract';

/**
 * The worker of the bare round-trip floor: completes each job at once with a result the size of a
 * command's (no database), with the command worker's concurrency (WORKER_CONCURRENCY, default 16),
 * replying to the HTTP side as the command worker replies to the API (infra/command-replies.ts).
 * A process of its own, like the command worker. Started by bench/run.ts.
 */

const redis = createRedis({ url: process.env.REDIS_URL! }, 'worker');
let next = 0;
const worker = new Worker(
  QUEUE_FLOOR.name,
  async (job) => {
    next += 1;
    const result = { ok: true, entity: 'Scheme', dbId: next, encodedId: `SCH-${next}`, version: 1 };
    void publishReply(redis, QUEUE_FLOOR.prefix, { jobId: job.id!, result }).catch(() => undefined);
    return result;
  },
  {
    connection: { url: process.env.REDIS_URL!, maxRetriesPerRequest: null },
    prefix: QUEUE_FLOOR.prefix,
    concurrency: Number(process.env.WORKER_CONCURRENCY ?? 16),
  },
);

void worker.waitUntilReady().then(() => console.log('queue floor worker ready'));
process.on('SIGTERM', () => void worker.close().then(() => redis.quit().finally(() => process.exit(0))));
