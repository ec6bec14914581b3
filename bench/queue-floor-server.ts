import { randomUUID } from 'node:crypto';
import express from 'express';
import { Queue } from 'bullmq';
import { createRedis } from '../infra/redis';
import { commandRepliesChannel, parseReply } from '../infra/command-replies';
import { FLOOR_SUBJECT, PATCHABLE, QUEUE_FLOOR, fullDesignFloor, type Patchable } from './queue-floor-contract';
import { admitCommand } from '../infra/pending-commands';

/**
 * The second write floor of DESIGN §9, its HTTP side: `POST /floor/queue` adds a job and answers
 * once its reply comes back, the way the API awaits a command (api/commands/command-bus.ts: a
 * producer connection that fails fast, one subscription to the replies per process, the waiter
 * registered before the add, job id = a fresh UUID, the command job's retention) but with nothing
 * else: no admission count, no signature, no polling. bench/queue-floor-worker.ts completes the jobs in another
 * process: without a database, or under /floor/design/… in the transaction the design requires
 * (bench/design-floor-writes.ts). Started by bench/run.ts.
 */

const redisUrl = process.env.REDIS_URL!;
const redis = createRedis({ url: redisUrl }, 'producer');
const queue = new Queue(QUEUE_FLOOR.name, { connection: redis, prefix: QUEUE_FLOOR.prefix });
const replies = createRedis({ url: redisUrl }, 'worker');

/** The complete design floor admits each design write as the API admits a command (queue-floor-contract.ts). */
const full = fullDesignFloor();
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

/** Adds a job and answers once its reply comes back: 201 + Location, 204, 404 or 503. */
async function roundTrip(
  res: express.Response,
  name: string,
  data: unknown,
  answer: (result: { encodedId?: string }) => void,
): Promise<void> {
  const id = randomUUID();
  if (
    full &&
    name === 'design' &&
    !(await admitCommand(redis, QUEUE_FLOOR.prefix, FLOOR_SUBJECT, id, full.maxPending))
  ) {
    res.status(429).end();
    return;
  }
  const done = new Promise<unknown>((resolve) => waiters.set(id, resolve));
  try {
    await queue.add(name, data, { jobId: id, ...QUEUE_FLOOR.jobOptions });
    const result = (await done) as { failed?: string; encodedId?: string };
    if (result.failed) res.status(result.failed.includes('not found') ? 404 : 503).end();
    else answer(result);
  } finally {
    waiters.delete(id);
  }
}

const created = (res: express.Response) => (result: { encodedId?: string }) =>
  void res.status(201).setHeader('Location', `/Schemes/${result.encodedId}`).end();

app.post('/floor/queue', (req, res) => roundTrip(res, 'roundtrip', { body: req.body as unknown }, created(res)));

// The design floor (bench/design-floor-writes.ts): the same round trip, the worker applying the
// write in the transaction the design requires. Scheme ids are database ids, as on /floor/schemes.
app.post('/floor/design/schemes', (req, res) =>
  roundTrip(
    res,
    'design',
    { kind: 'post', name: String((req.body as { SchemeName?: unknown }).SchemeName) },
    created(res),
  ),
);
app.patch('/floor/design/schemes/:id', (req, res) => {
  const change = changeOf(req.body);
  if (!change) return void res.status(400).end();
  return roundTrip(
    res,
    'design',
    { kind: 'patch', id: Number(req.params.id), ...change },
    () => void res.status(204).end(),
  );
});

/**
 * The one field a benchmark PATCH changes, from a JSON Patch (`[{"op":"replace","path":"/TotalUnits",…}]`,
 * bench/run.ts) or a merge body (`{"SchemeName":…}`, the peers' scenario f).
 */
function changeOf(body: unknown): { field: Patchable; value: string | number } | null {
  const [op] = Array.isArray(body) ? (body as { path?: string; value?: unknown }[]) : [];
  const [field, value] = op ? [op.path?.slice(1), op.value] : (Object.entries(body ?? {})[0] ?? []);
  if (!field || !(field in PATCHABLE) || (typeof value !== 'string' && typeof value !== 'number')) return null;
  return { field: field as Patchable, value };
}

void Promise.all([queue.waitUntilReady(), replies.subscribe(commandRepliesChannel(QUEUE_FLOOR.prefix))]).then(() => {
  const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('queue floor ready'));
  process.on('SIGTERM', () =>
    server.close(() => void Promise.allSettled([replies.quit(), queue.close()]).then(() => process.exit(0))),
  );
});
