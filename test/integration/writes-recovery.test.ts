import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { startStack, workerProcessEnv, type HttpResult, type Stack } from '../support/stack';
import { idFromLocation, waitFor } from '../support/writes';

/**
 * A command worker process killed (SIGKILL) in the middle of a command: BullMQ's stalled-job check
 * in another worker runs the command again, and command_log makes sure it is applied exactly once,
 * whether the first run died before its commit or after it. The slow command comes from the worker
 * process's test-only COMMAND_TEST_PAUSE_* settings (workers/commands/main.ts).
 */

const WORKER_MAIN = path.resolve(__dirname, '../../workers/commands/main.js');

let stack: Stack;
test.before(async () => {
  // No in-process workers: the command is picked up by the child process first.
  stack = await startStack({ workers: [], env: { COMMAND_TIMEOUT_MS: '30000' } });
});
test.after.always(async () => {
  await stack?.close();
});

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<unknown>;
}

function spawnWorker(pauseAt: 'before-commit' | 'after-commit'): WorkerProcess {
  const child = spawn(process.execPath, [WORKER_MAIN], {
    env: workerProcessEnv(stack, {
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: '1',
      DB_POOL_MAX: '2',
      // Every worker of a queue takes part in the stalled check, so all of them get the short settings.
      COMMAND_LOCK_DURATION_MS: '1000',
      COMMAND_STALLED_INTERVAL_MS: '250',
      COMMAND_TEST_PAUSE_MS: '60000',
      COMMAND_TEST_PAUSE_AT: pauseAt,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exited };
}

/** POSTs a Scheme, lets the child worker take it up to its pause, then SIGKILLs the child. */
async function postAndKillMidCommand(t: ExecutionContext, pauseAt: 'before-commit' | 'after-commit', name: string) {
  const worker = spawnWorker(pauseAt);
  t.teardown(() => void worker.child.kill('SIGKILL'));
  try {
    await waitFor(async () => worker.output().includes('commands worker ready'), 15_000);
    const response = stack.request('POST', '/Schemes', { body: { SchemeName: name } });
    await waitFor(async () => worker.output().includes('"msg":"test pause"'), 15_000);
    worker.child.kill('SIGKILL');
    await worker.exited;
    return { response }; // not awaited here: it completes only once another worker recovers the job
  } catch (err) {
    throw new Error(`${(err as Error).message}; worker output:\n${worker.output()}`, { cause: err });
  }
}

/** Another worker notices the dead one's lapsed lock and runs the job again. */
async function startRecoveringWorker(t: ExecutionContext) {
  const recovering = await startCommandWorker(stack.config, {
    stalledRecovery: { lockDuration: 1000, stalledInterval: 250 },
  });
  t.teardown(() => recovering.close());
}

async function assertAppliedOnce(t: ExecutionContext, name: string, res: HttpResult) {
  t.is(res.status, 201, res.text);
  const rows = (await stack.knex('schemes').where({ scheme_name: name })) as { encoded_id: string }[];
  t.is(rows.length, 1, 'applied exactly once');
  t.is(rows[0]!.encoded_id, idFromLocation(res));
  const events = await stack.knex('outbox').whereRaw("event->>'entityId' = ?", [rows[0]!.encoded_id]);
  t.is(events.length, 1, 'one event');
}

test.serial('killed before its commit: the recovered job applies the command once', async (t) => {
  const name = 'Survivor before commit';
  const { response } = await postAndKillMidCommand(t, 'before-commit', name);
  t.is((await stack.knex('schemes').where({ scheme_name: name })).length, 0, 'nothing committed by the dead worker');
  await startRecoveringWorker(t);
  await assertAppliedOnce(t, name, await response);
});

test.serial('killed after its commit: the recovered job returns the recorded result, applies nothing', async (t) => {
  const name = 'Survivor after commit';
  const { response } = await postAndKillMidCommand(t, 'after-commit', name);
  t.is((await stack.knex('schemes').where({ scheme_name: name })).length, 1, 'committed by the dead worker');
  await startRecoveringWorker(t);
  await assertAppliedOnce(t, name, await response);
  // The event committed with it reaches the event queues although its process died.
  await waitFor(async () => (await stack.knex('outbox').whereNull('published_at').first()) === undefined);
});

test.serial(
  'a crash loop: the command that kept killing its workers answers 503, and its repeat runs once',
  async (t) => {
    const name = 'Crash loop';
    const send = () =>
      stack.request('POST', '/Schemes', { body: { SchemeName: name }, headers: { 'idempotency-key': 'crash-loop-1' } });
    const response = send();
    // Three workers in a row die holding it (maxStalledCount is 2: the third stall fails the job).
    for (let death = 1; death <= 3; death++) {
      const worker = spawnWorker('before-commit');
      t.teardown(() => void worker.child.kill('SIGKILL'));
      await waitFor(async () => worker.output().includes('"msg":"test pause"'), 20_000).catch((err: unknown) => {
        throw new Error(`death ${death}: ${(err as Error).message}; worker output:\n${worker.output()}`, {
          cause: err,
        });
      });
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    // A healthy worker's stalled check finds the third stall and fails the job: 503, not 500.
    await startRecoveringWorker(t);
    const failed = await response;
    t.is(failed.status, 503, failed.text);
    t.truthy(failed.headers.get('retry-after'));
    t.is((await stack.knex('schemes').where({ scheme_name: name })).length, 0);
    // The same request again (same Idempotency-Key) runs the command, once.
    await assertAppliedOnce(t, name, await send());
  },
);
