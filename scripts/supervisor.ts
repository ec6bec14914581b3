import { spawn, type ChildProcess } from 'node:child_process';
import { nodeArgsOf, type ProcessKind } from './process-commands';

/**
 * `npm start`'s process supervisor: the API and one process of each worker kind, output prefixed
 * per process, all stopped together on Ctrl-C/SIGTERM or when any one of them dies.
 */

const PROCESSES: ProcessKind[] = ['api', 'commands', 'views', 'notifications'];
const STOP_TIMEOUT_MS = 20_000;

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

for (const name of PROCESSES) {
  const child = spawn(process.execPath, nodeArgsOf(name), {
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(name, child);
  prefixLines(name, child.stdout!, process.stdout);
  prefixLines(name, child.stderr!, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`[supervisor] ${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping the rest`);
      stopAll(1);
    }
  });
}

const port = process.env.PORT || '3000';
console.log(
  `[supervisor] API: http://localhost:${port}  (health: /health/ready, queues: /admin/queues)  Ctrl-C stops everything`,
);
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
