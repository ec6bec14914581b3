import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { Webhook } from 'standardwebhooks';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { create, waitFor } from '../support/writes';
import { startReceiver, type Receiver } from '../support/webhook-receiver';

/**
 * Webhook deliveries made by real notification worker processes (DESIGN §16): one SIGKILLed while
 * a receiver holds its request open (the job is recovered by the next process and delivered: at
 * least once, never lost), and one started without WEBHOOK_ALLOW_PRIVATE_NETWORKS refusing at
 * delivery time the loopback targets a subscription was allowed to name when it was written —
 * by a name that resolves to loopback and by a literal address — without a request reaching them.
 */

const NOTIFICATIONS_MAIN = path.resolve(__dirname, '../../workers/notifications/main.js');
const SCHEDULE = '200ms,400ms';

let stack: Stack;
let hook: Receiver;
test.before(async () => {
  // The API and a command worker in this process; notification workers only as child processes.
  stack = await startStack({
    workers: [(config) => startCommandWorker(config)],
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
  });
  hook = await startReceiver();
});
test.after.always(async () => {
  await hook?.close();
  await stack?.close();
});

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<unknown>;
}

async function spawnNotifications(t: ExecutionContext, env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [NOTIFICATIONS_MAIN], {
    env: workerProcessEnv(stack, {
      LOG_LEVEL: 'info',
      DB_POOL_MAX: '3',
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
      // Every worker of a queue takes part in the stalled check: all of them get the short settings.
      WORKER_LOCK_DURATION_MS: '1000',
      WORKER_STALLED_INTERVAL_MS: '250',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  const worker = { child, output: () => output, exited };
  await waitFor(async () => output.includes('notifications worker ready'), 30_000).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; worker output:\n${output}`, { cause: err });
  });
  return worker;
}

async function stop(worker: WorkerProcess): Promise<void> {
  worker.child.kill('SIGKILL');
  await worker.exited;
}

interface Delivery {
  Attempt: number;
  StatusCode: number | null;
  Error: string | null;
}

async function deliveries(id: string): Promise<Delivery[]> {
  const res = await stack.get(`/Subscriptions/${id}/Deliveries`);
  if (res.status !== 200) throw new Error(res.text);
  return res.body as Delivery[];
}

async function subscribe(t: ExecutionContext, body: Record<string, unknown>): Promise<{ Id: string; Secret: string }> {
  const res = await stack.request('POST', '/Subscriptions', { body });
  t.is(res.status, 201, res.text);
  return res.body as { Id: string; Secret: string };
}

test.serial(
  'a notification worker killed mid-delivery: the next one delivers it (at least once, never lost)',
  async (t) => {
    hook.answer = (n) => (n === 0 ? 'hang' : { status: 204 });
    const sub = await subscribe(t, { Url: `${hook.url}/crash`, Events: ['SchemeCreated'] });
    const first = await spawnNotifications(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await create(stack, 'Schemes', { SchemeName: 'Delivered across a crash' });
    await waitFor(async () => hook.received.length === 1, 20_000);
    await stop(first); // SIGKILL while the receiver holds the request open
    t.deepEqual(await deliveries(sub.Id), [], 'the dead worker recorded nothing');

    const second = await spawnNotifications(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await waitFor(async () => (await deliveries(sub.Id)).some((d) => d.StatusCode === 204), 30_000).catch(
      (err: unknown) => {
        throw new Error(`${(err as Error).message}; worker output:\n${second.output()}`, { cause: err });
      },
    );
    t.true(hook.received.length >= 2);
    t.is(new Set(hook.received.map((got) => got.headers['webhook-id'])).size, 1, 'the same event, redelivered');
    for (const got of hook.received) new Webhook(sub.Secret).verify(got.body, got.headers as Record<string, string>);
    await stop(second);
  },
);

test.serial('without the allowance, delivery refuses loopback targets named when they were allowed', async (t) => {
  const port = new URL(hook.url).port;
  const before = hook.received.length;
  const byName = await subscribe(t, { Url: `http://localhost:${port}/by-name`, Events: ['CompanyCreated'] });
  const byAddress = await subscribe(t, { Url: `http://127.0.0.1:${port}/by-address`, Events: ['CompanyCreated'] });
  const guarded = await spawnNotifications(t, {}); // WEBHOOK_ALLOW_PRIVATE_NETWORKS unset: the guard is on
  await create(stack, 'Companies', { Name: 'Guarded' });
  const attempts = SCHEDULE.split(',').length + 1;
  for (const [sub, reason] of [
    [byName, /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
    [byAddress, /^refused: 127\.0\.0\.1, a loopback address/],
  ] as const) {
    await waitFor(async () => (await deliveries(sub.Id)).length === attempts, 20_000);
    for (const attempt of await deliveries(sub.Id)) {
      t.is(attempt.StatusCode, null);
      t.regex(attempt.Error ?? '', reason);
    }
  }
  const failed = await stack.get('/Jobs?queue=webhooks&state=failed');
  t.true((failed.body as { FailedReason: string }[]).some((job) => /^refused: /.test(job.FailedReason)));
  t.is(hook.received.length, before, 'no request reached the receiver');
  await stop(guarded);
});
