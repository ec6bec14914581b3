import { Worker } from 'bullmq';
import type { Logger } from '../../db/infra/logger';
import { bullConnection } from '../../db/infra/redis';
import type { QueueName } from '../../domain/queues/queue-contracts';
import { JobDispatcher, type JobHandlers } from './job-dispatcher';

export interface RunWorkerOptions<Q extends QueueName> {
  queue: Q;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  logger: Logger;
  /** One handler per kind of job of the queue: the worker does not start without each. */
  handlers: JobHandlers<Q>;
  /**
   * How soon a job whose worker died is run again: its lock lapses after `lockDuration` and another
   * worker's check (every `stalledInterval`) moves it back to waiting. BullMQ's defaults (30 s)
   * apply when unset.
   */
  stalledRecovery?: { lockDuration?: number; stalledInterval?: number; maxStalledCount?: number };
}

const CLOSE_TIMEOUT_MS = 15_000;

/**
 * A BullMQ worker of `queue` with one processor, the queue's JobDispatcher. How long finished jobs
 * stay is each job's own option (domain/queues/job-registry.ts), so the worker sets none.
 */
export function createQueueWorker<Q extends QueueName>(options: RunWorkerOptions<Q>): Worker {
  const dispatcher = new JobDispatcher(options.queue, options.handlers);
  const worker = new Worker(options.queue, dispatcher.process, {
    connection: bullConnection(options.redisUrl, 'worker'),
    prefix: options.prefix,
    concurrency: options.concurrency,
    ...Object.fromEntries(Object.entries(options.stalledRecovery ?? {}).filter(([, v]) => v !== undefined)),
  });
  worker.on('failed', (job, err) => {
    options.logger.warn({ queue: options.queue, jobId: job?.id, name: job?.name, err: err.message }, 'job failed');
  });
  worker.on('error', (err) => options.logger.error({ queue: options.queue, err: err.message }, 'worker error'));
  return worker;
}

/**
 * Closes workers on SIGTERM/SIGINT. `worker.close()` waits for active jobs without bound
 * (DESIGN §11), so it is raced against a timeout; an unfinished job is then recovered as stalled.
 */
export function closeOnSignals(logger: Logger, close: () => Promise<void>): void {
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'stopping: finishing active jobs');
    const timer = setTimeout(() => {
      logger.error('active jobs did not finish in time; exiting');
      process.exit(1);
    }, CLOSE_TIMEOUT_MS);
    timer.unref();
    close().then(
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
