import type { Logger } from './logger';
import { tracing } from './tracing/tracing';

export interface ShutdownOptions {
  /** What the process finishes before it exits (in-flight requests, active jobs). */
  what: string;
  /** Longest wait before exiting anyway (what is left is recovered elsewhere: stalled jobs, client retries). */
  graceMs: number;
  close(): Promise<void>;
}

/**
 * Every process's SIGTERM/SIGINT handling: close once, exit 0 when closed, exit 1 when closing
 * fails or outlasts the grace period (a `worker.close()` or a keep-alive client can wait without
 * bound, DESIGN §11).
 */
export function exitOnSignals(logger: Logger, options: ShutdownOptions): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `shutting down: finishing ${options.what}`);
    const force = setTimeout(() => {
      logger.error(`${options.what} did not finish in ${options.graceMs} ms; exiting`);
      process.exit(1);
    }, options.graceMs);
    force.unref();
    // Spans still buffered are exported before the process goes (a no-op with tracing off).
    const closeAndFlush = () =>
      options.close().finally(() =>
        tracing()
          .flush()
          .catch(() => undefined),
      );
    closeAndFlush().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
