import cluster from 'node:cluster';
import type { Logger } from './logger';

const RESPAWN_DELAY_MS = 1000;

/**
 * Runs `processes` copies of this program under one primary (node:cluster): a copy that dies is
 * replaced, SIGTERM/SIGINT are passed on, and the primary exits once every copy has stopped. HTTP
 * copies share the listening port.
 */
export function runClusterPrimary(processes: number, logger: Logger): void {
  let stopping = false;
  const fork = () =>
    cluster.fork().on('exit', (code, signal) => {
      if (stopping) return;
      logger.error({ code, signal }, 'process died; starting another');
      setTimeout(fork, RESPAWN_DELAY_MS).unref();
    });
  for (let i = 0; i < processes; i++) fork();
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  cluster.on('exit', () => {
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
}

/** Process count from an environment variable (default 1), refusing anything but a positive integer. */
export function processCount(name: string, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return n;
}

export const isClusterPrimary = (): boolean => cluster.isPrimary;
