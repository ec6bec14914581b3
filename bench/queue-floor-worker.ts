import { Worker } from 'bullmq';

import { QUEUE_FLOOR } from './queue-floor-contract';

/**
 * The worker of the bare round-trip floor: completes each job at once with a result the size of a
 * command's (no database), with the command worker's concurrency (WORKER_CONCURRENCY, default 16).
 * A process of its own, like the command worker. Started by bench/run.ts.
 */

let next = 0;
const worker = new Worker(
  QUEUE_FLOOR.name,
  async () => {
    next += 1;
    return { ok: true, entity: 'Scheme', dbId: next, encodedId: `SCH-${next}`, version: 1 };
  },
  {
    connection: { url: process.env.REDIS_URL!, maxRetriesPerRequest: null },
    prefix: QUEUE_FLOOR.prefix,
    concurrency: Number(process.env.WORKER_CONCURRENCY ?? 16),
  },
);

void worker.waitUntilReady().then(() => console.log('queue floor worker ready'));
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
