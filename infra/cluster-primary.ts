import cluster from 'node:cluster';
import type { Logger } from './logger';
import { aggregateClusterMetrics } from './metrics/cluster-metrics';
import { serveMetrics, type MetricsServer } from './metrics/metrics-server';

const RESPAWN_DELAY_MS = 1000;

/**
 * Runs `processes` copies of this program under one primary (node:cluster): a copy that dies is
 * replaced, SIGTERM/SIGINT are passed on, and the primary exits once every copy has stopped. HTTP
 * copies share the listening port. The primary sums its copies' metrics (infra/metrics/cluster-metrics.ts)
 * for copies that ask, and serves the sum on `metricsAt` when given (worker processes' METRICS_PORT).
 */
export function runClusterPrimary(
  processes: number,
  logger: Logger,
  options: { metricsAt?: { port: number; host: string } } = {},
): void {
  let stopping = false;
  const scrape = aggregateClusterMetrics();
  let metrics: Promise<MetricsServer | undefined> = Promise.resolve(undefined);
  if (options.metricsAt) {
    metrics = serveMetrics({ ...options.metricsAt, logger, scrape }).catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, 'metrics port not served');
      return undefined;
    });
  }
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
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0) {
      void metrics.then((server) => server?.close()).finally(() => process.exit(0));
    }
  });
}

export const isClusterPrimary = (): boolean => cluster.isPrimary;
