import { randomUUID } from 'node:crypto';
import express from 'express';
import { Queue, QueueEvents } from 'bullmq';
import { createRedis } from '../infra/redis';
import { QUEUE_FLOOR } from './queue-floor-contract';

/**
 * The second write floor of DESIGN §9, its HTTP side: `POST /floor/queue` adds a job and answers
 * once its completion comes back, the way the API awaits a command (api/commands/command-bus.ts: a
 * producer connection that fails fast, one QueueEvents per process, the waiter registered before
 * the add, job id = a fresh UUID, the command job's retention) but with nothing else: no admission
 * count, no signature, no polling. bench/queue-floor-worker.ts completes the jobs in another
 * process, without a database. Started by bench/run.ts.
 */

const redisUrl = process.env.REDIS_URL!;
const redis = createRedis({ url: redisUrl }, 'producer');
const queue = new Queue(QUEUE_FLOOR.name, { connection: redis, prefix: QUEUE_FLOOR.prefix });
const events = new QueueEvents(QUEUE_FLOOR.name, { connection: { url: redisUrl }, prefix: QUEUE_FLOOR.prefix });
events.setMaxListeners(0);

const waiters = new Map<string, (result: unknown) => void>();
events.on('completed', ({ jobId, returnvalue }) => waiters.get(jobId)?.(returnvalue));
events.on('failed', ({ jobId, failedReason }) => waiters.get(jobId)?.({ failed: failedReason }));

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(express.json({ type: ['application/json', 'application/json-patch+json'] }));

app.post('/floor/queue', async (req, res) => {
  const id = randomUUID();
  const done = new Promise<unknown>((resolve) => waiters.set(id, resolve));
  try {
    await queue.add('roundtrip', { body: req.body as unknown }, { jobId: id, ...QUEUE_FLOOR.jobOptions });
    const result = (await done) as { failed?: string; encodedId?: string };
    if (result.failed) res.status(503).end();
    else res.status(201).setHeader('Location', `/floor/queue/${result.encodedId}`).end();
  } finally {
    waiters.delete(id);
  }
});

void Promise.all([queue.waitUntilReady(), events.waitUntilReady()]).then(() => {
  const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('queue floor ready'));
  process.on('SIGTERM', () =>
    server.close(() => void Promise.allSettled([events.close(), queue.close()]).then(() => process.exit(0))),
  );
});
