import autocannon, { type Result } from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { QUEUE } from '../domain/queues/queue-contracts';
import type { ProcessKind } from '../scripts/process-commands';

/** What the benchmark's separate runs (tracing, replicas, …) share: one load run, waits. */

/** The service's processes a run starts, and how its tables name them. */
export const KINDS: ProcessKind[] = ['api', 'commands', 'views', 'notifications'];
export const LABELS: Record<ProcessKind, string> = {
  api: 'API',
  commands: 'command worker',
  views: 'view worker',
  notifications: 'notification worker',
};

/** One autocannon run, as a promise. */
export function autocannonRun(opts: autocannon.Options): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** Polls `check` every 200 ms (a throwing check counts as not yet) until it holds, or throws. */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Resolves once the event workers under `prefix` have nothing waiting or running. */
export async function eventsDrained(redisUrl: string, prefix: string): Promise<void> {
  const queues = [QUEUE.views, QUEUE.notifications].map(
    (name) => new Queue(name, { connection: { url: redisUrl }, prefix }),
  );
  try {
    await until(async () => {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts('wait', 'active', 'prioritized', 'delayed')));
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    }, 'the event backlog drained');
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}

/** SIGTERMs the processes still running and waits for each to exit. */
export async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }),
  );
}
