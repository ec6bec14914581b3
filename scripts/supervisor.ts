import { spawn, type ChildProcess } from 'node:child_process';
import { nodeArgsOf, type ProcessKind } from './process-commands';
import { metricsEnvironments } from './metrics-peers';

/**
 * `npm start`'s process supervisor: the API and one process of each worker kind, output prefixed
 * per process, all stopped together on Ctrl-C/SIGTERM. A process that dies is started again after a
 * growing pause (1 s, 2 s, 4 s … 30 s; back to 1 s once it has run for a minute), so one crash never
 * takes the others down; one that cannot even start (it dies within seconds, five times running:
 * a configuration error, a store that is not there) stops everything, saying so. With
 * METRICS_ENABLED the API's `/metrics` shows every process's metrics (scripts/metrics-peers.ts).
 */

const PROCESSES: ProcessKind[] = ['api', 'commands', 'views', 'notifications'];
const STOP_TIMEOUT_MS = 20_000;
const EARLY_EXIT_MS = 5_000;
const MAX_EARLY_EXITS = 5;
const HEALTHY_AFTER_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

const children = new Map<string, ChildProcess>();
let stopping = false;

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WriteStream): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) out.write(`${name.padEnd(13)}| ${line}\n`);
  });
}

function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  console.log('[supervisor] stopping all processes…');
  for (const child of children.values()) child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(code || 1);
  }, STOP_TIMEOUT_MS);
  timer.unref();
  const check = setInterval(() => {
    if (children.size === 0) {
      clearInterval(check);
      console.log('[supervisor] all stopped');
      process.exit(code);
    }
  }, 100);
}

let addedEnv = new Map<ProcessKind, NodeJS.ProcessEnv>();

function start(name: ProcessKind, earlyExits = 0, backoffMs = 1000): void {
  const startedAt = Date.now();
  const child = spawn(process.execPath, nodeArgsOf(name), {
    env: { ...process.env, ...addedEnv.get(name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(name, child);
  prefixLines(name, child.stdout!, process.stdout);
  prefixLines(name, child.stderr!, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (stopping) return;
    const ranFor = Date.now() - startedAt;
    const early = ranFor < EARLY_EXIT_MS ? earlyExits + 1 : 0;
    const how = signal ?? `code ${code}`;
    if (early >= MAX_EARLY_EXITS) {
      console.error(
        `[supervisor] ${name} exited (${how}) ${early} times within seconds of starting; stopping the rest`,
      );
      stopAll(1);
      return;
    }
    const pause = ranFor >= HEALTHY_AFTER_MS ? 1000 : backoffMs;
    console.error(`[supervisor] ${name} exited unexpectedly (${how}); starting it again in ${pause / 1000} s`);
    setTimeout(() => {
      if (!stopping) start(name, early, Math.min(pause * 2, MAX_BACKOFF_MS));
    }, pause);
  });
}

process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

void (async () => {
  addedEnv = await metricsEnvironments(PROCESSES, process.env);
  for (const name of PROCESSES) start(name);
  const port = process.env.PORT || '3000';
  const metrics = addedEnv.get('api')?.METRICS_PEERS ? ', metrics of every process: /metrics' : '';
  console.log(
    `[supervisor] API: http://localhost:${port}  (health: /health/ready, queues: /admin/queues${metrics})  Ctrl-C stops everything`,
  );
})().catch((err: unknown) => {
  console.error(`[supervisor] could not start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
