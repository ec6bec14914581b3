import { Worker, type Job, type Processor } from 'bullmq';
import type { Logger } from '../../db/infra/logger';
import { bullConnection } from '../../db/infra/redis';
import type { QueueName } from '../../domain/queues/queue-contracts';

/** Handles one job name of a queue. */
export type JobHandler = (job: Job) => Promise<unknown>;

export interface RunWorkerOptions {
  queue: QueueName;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  logger: Logger;
  /** Every job name the queue carries, with its handler. A job with no handler fails loudly. */
  handlers: Record<string, JobHandler>;
  /** Names the producers may send: start fails if any lacks a handler (no silent drops). */
  expectedJobNames: readonly string[];
  /**
   * How soon a job whose worker died is run again: its lock lapses after `lockDuration` and another
   * worker's check (every `stalledInterval`) moves it back to waiting. BullMQ's defaults (30 s)
   * apply when unset.
   */
  stalledRecovery?: { lockDuration?: number; stalledInterval?: number; maxStalledCount?: number };
}

const CLOSE_TIMEOUT_MS = 15_000;

export function createQueueWorker(options: RunWorkerOptions): Worker {
  const missing = options.expectedJobNames.filter((name) => !options.handlers[name]);
  if (missing.length) {
    throw new Error(`queue ${options.queue}: no handler for job name(s) ${missing.join(', ')}`);
  }
  const processor: Processor = async (job) => {
    const handler = options.handlers[job.name];
    if (!handler) throw new Error(`no handler for job ${job.name} on queue ${options.queue}`);
    return handler(job);
  };
  const worker = new Worker(options.queue, processor, {
    connection: bullConnection(options.redisUrl, 'worker'),
    prefix: options.prefix,
    concurrency: options.concurrency,
    ...Object.fromEntries(Object.entries(options.stalledRecovery ?? {}).filter(([, v]) => v !== undefined)),
    // Finished jobs stay a while for awaiting callers, /Jobs and Bull Board; never removed at once.
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
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
