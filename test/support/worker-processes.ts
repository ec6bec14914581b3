import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from './queues';

/**
 * Worker processes of every kind, spawned from their built entry points with `env` (usually
 * `workerProcessEnv(stack)`), for tests of what the real processes do on a store of their own.
 */

const KINDS = ['commands', 'views', 'notifications'] as const;
type WorkerKind = (typeof KINDS)[number];
const ROOT = path.resolve(__dirname, '../../..');

export interface WorkerProcesses {
  /** Sends SIGTERM once every process has said it is ready (its handler exists only then); exit codes. */
  stop(): Promise<(number | null)[]>;
  /** SIGKILLs whatever still runs (for teardown). */
  kill(): void;
}

/** One process of each kind, or the kinds named (`['notifications', 'notifications']`: two of one). */
export function spawnWorkerProcesses(env: NodeJS.ProcessEnv, kinds: readonly WorkerKind[] = KINDS): WorkerProcesses {
  const children: ChildProcess[] = kinds.map((kind) =>
    spawn(process.execPath, [path.join(ROOT, `dist/workers/${kind}/main.js`)], {
      // At info, so each process's "worker ready" line can be waited for.
      env: { ...env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  const logs = children.map((child) => {
    const log = { text: '' };
    child.stdout!.on('data', (chunk: Buffer) => (log.text += chunk.toString()));
    return log;
  });
  const exits = children.map(
    (child) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
  );
  return {
    async stop() {
      await eventually(async () => logs.every((log) => log.text.includes('worker ready')), 60_000);
      children.forEach((child) => child.kill('SIGTERM'));
      return Promise.all(exits);
    },
    kill() {
      children.forEach((child) => child.exitCode === null && child.kill('SIGKILL'));
    },
  };
}
