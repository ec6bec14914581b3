import { randomUUID } from 'node:crypto';
import express from 'express';
import { Queue } from 'bullmq';
import { createRedis } from '../infra/redis';
import { commandRepliesChannel, parseReply } from '../infra/command-replies';
import { QUEUE_FLOOR } from './queue-floor-contract';

/**
 * The second write floor of DESIGN §9, its HTTP side: `POST /floor/queue` adds a job and answers
 * once its reply comes back, the way the API awaits a command (api/commands/command-bus.ts: a
 * producer connection that fails fast, one subscription to the replies per process, the waiter
 * registered before the add, job id = a fresh UUID, the command job's retention) but with nothing
 * else: no admission count, no signature, no polling. bench/queue-floor-worker.ts completes the jobs in another
 * process, without a database. Started by bench/run.ts.
 */

const redisUrl = process.env.REDIS_URL!;
const redis = createRedis({ url: redisUrl }, 'producer');
const queue = new Queue(QUEUE_FLOOR.name, { connection: redis, prefix: QUEUE_FLOOR.prefix });
const replies = createRedis({ url: redisUrl }, 'worker');

const waiters = new Map<string, (result: unknown) => void>();
replies.on('message', (_channel: string, message: string) => {
  const reply = parseReply(message);
  if (reply && 'result' in reply) waiters.get(reply.jobId)?.(reply.result);
  else if (reply && 'failedReason' in reply) waiters.get(reply.jobId)?.({ failed: reply.failedReason });
});

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

void Promise.all([queue.waitUntilReady(), replies.subscribe(commandRepliesChannel(QUEUE_FLOOR.prefix))]).then(() => {
  const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('queue floor ready'));
  process.on('SIGTERM', () =>
    server.close(() => void Promise.allSettled([replies.quit(), queue.close()]).then(() => process.exit(0))),
  );
});
