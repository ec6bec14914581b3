import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Queue, Worker } from 'bullmq';
import { createRedis, queuePrefix, type RedisClient } from '../../infra/redis';
import type { Command } from '../../domain/commands/command';
import { signCommand } from '../../domain/commands/command-signature';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { AdaptiveConcurrency } from '../../workers/commands/adaptive-concurrency';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { TestQueues, eventually } from '../support/queues';
import { startStack, type Stack } from '../support/stack';

/**
 * The command worker takes one job at a time while its queue drains between jobs, and up to its
 * WORKER_CONCURRENCY once jobs wait (workers/commands/adaptive-concurrency.ts): on real BullMQ
 * workers and Redis, and through the real command worker, whose waiting commands still commit
 * together (group commit).
 */

let stack: Stack;
let connection: RedisClient;
const closing: { close(): Promise<unknown> }[] = [];

test.before(async () => {
  stack = await startStack({ workers: [(config) => startCommandWorker(config)] });
  connection = createRedis(stack.config.redis, 'worker');
});
test.after.always(async () => {
  await Promise.allSettled(closing.map((c) => c.close()));
  connection?.disconnect();
  await stack?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A BullMQ worker on a queue of its own, with the command worker's policy, recording what it saw. */
function observedWorker(max: number) {
  const name = `adaptive-${randomUUID()}`;
  const prefix = queuePrefix(stack.config, name);
  const queue = new Queue(name, { connection, prefix });
  const seen = { running: 0, mostRunning: 0, concurrencyAtStart: [] as number[], done: 0 };
  const policy = new AdaptiveConcurrency(max);
  const worker: Worker = new Worker(
    name,
    async () => {
      policy.jobStarted();
      seen.concurrencyAtStart.push(worker.concurrency);
      seen.running += 1;
      seen.mostRunning = Math.max(seen.mostRunning, seen.running);
      await sleep(20);
      seen.running -= 1;
      seen.done += 1;
    },
    { connection, prefix, concurrency: max },
  );
  policy.attach(worker);
  closing.push(worker, queue);
  return { queue, worker, seen };
}

test.serial('jobs that arrive one at a time run at a concurrency of one', async (t) => {
  const { queue, seen } = observedWorker(8);
  for (let i = 0; i < 6; i++) {
    await queue.add('job', { i });
    await eventually(async () => seen.done === i + 1);
  }
  t.deepEqual(seen.concurrencyAtStart, Array(6).fill(1));
  t.is(seen.mostRunning, 1);
});

test.serial('waiting jobs raise it to the maximum; the next drain sets it back to one', async (t) => {
  const { queue, worker, seen } = observedWorker(8);
  await queue.addBulk(Array.from({ length: 40 }, (_, i) => ({ name: 'job', data: { i } })));
  await eventually(async () => seen.done === 40, 15_000);
  t.true(seen.concurrencyAtStart.includes(8), 'a job started at the maximum');
  t.true(seen.mostRunning > 1, `jobs ran together (at most ${seen.mostRunning})`);
  // Jobs taken before the queue drained may start after it: the drain that follows the next lone
  // job's fetch (at the latest) sets the concurrency back to one.
  for (let i = 0; i < 2; i++) {
    await queue.add('job', { alone: i });
    await eventually(async () => seen.done === 41 + i);
  }
  t.is(seen.concurrencyAtStart.at(-1), 1, 'a lone job after the burst runs at one');
  t.is(worker.concurrency, 1);
});

test.serial('the command worker still commits commands that wait together in shared transactions', async (t) => {
  const queues = new TestQueues(stack.config);
  t.teardown(() => queues.close());
  const queue = queues.queue(QUEUE.commands);
  const events = await queues.queueEvents(QUEUE.commands);
  const commands: Command[] = Array.from({ length: 40 }, (_, i) => ({
    commandId: randomUUID(),
    name: 'create',
    entity: 'Company',
    body: { Name: `Adaptive ${i}` },
    subject: 'tester',
    issuedAt: new Date().toISOString(),
  }));
  const jobs = await queue.addBulk(
    commands.map((command) => ({
      name: command.name,
      data: signCommand(command, stack.config.commandSigningKey),
      opts: { jobId: command.commandId },
    })),
  );
  const results = await Promise.all(jobs.map((job) => job.waitUntilFinished(events, 15_000)));
  t.true(results.every((result) => (result as { ok?: boolean }).ok === true));
  const rows = (await stack.knex
    .from('command_log')
    .whereIn(
      'command_id',
      commands.map((c) => c.commandId),
    )
    .select(stack.knex.raw('xmin::text as xmin'))) as { xmin: string }[];
  t.is(rows.length, 40);
  const transactions = new Set(rows.map((r) => r.xmin)).size;
  t.true(transactions < 40, `40 commands in ${transactions} transactions`);
});
