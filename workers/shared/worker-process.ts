import type { Worker } from 'bullmq';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { createLogger, type Logger } from '../../db/infra/logger';
import type { AppConfig } from '../../domain/config/load-config';
import { loadConfig } from '../../domain/config/load-config';
import { closeOnSignals, createQueueWorker } from './run-worker';
import type { JobHandlers } from './job-dispatcher';
import type { QueueName } from '../../domain/queues/queue-contracts';

/** What a worker kind needs to run: config, its own database pool and logger. */
export interface WorkerContext {
  config: AppConfig;
  knex: Knex;
  logger: Logger;
}

export interface RunningWorker {
  close(): Promise<void>;
}

export function workerContext(config: AppConfig, component: string): WorkerContext {
  const logger = createLogger(component, config.logLevel);
  return { config, knex: createKnex(config.databaseUrl, config.dbPoolMax, logger), logger };
}

/**
 * Entry point of one worker process (`npm run worker:*`): configuration only from the environment,
 * closed cleanly on SIGTERM/SIGINT.
 */
export function runWorkerProcess(name: string, start: (config: AppConfig) => Promise<RunningWorker>): void {
  const boot = async () => {
    const config = loadConfig();
    const running = await start(config);
    const logger = createLogger(name, config.logLevel);
    logger.info({ concurrency: config.workerConcurrency }, `${name} worker started`);
    closeOnSignals(logger, () => running.close());
  };
  boot().catch((err: unknown) => {
    console.error(`[${name}] failed to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

/**
 * Starts a worker of `queue` in this process with its own pool and logger. `handlersFor` gets the
 * context and names one handler per kind of job of the queue, or the worker refuses to start.
 */
export async function startQueueWorker<Q extends QueueName>(
  config: AppConfig,
  queue: Q,
  handlersFor: (ctx: WorkerContext) => JobHandlers<Q>,
): Promise<RunningWorker> {
  const ctx = workerContext(config, queue);
  let worker: Worker;
  try {
    worker = createQueueWorker({
      queue,
      redisUrl: config.redisUrl,
      prefix: config.queuePrefix,
      concurrency: config.workerConcurrency,
      stalledRecovery: config.stalledRecovery,
      logger: ctx.logger,
      handlers: handlersFor(ctx),
    });
  } catch (err) {
    await ctx.knex.destroy(); // refused at start (a kind of job without a handler)
    throw err;
  }
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await ctx.knex.destroy();
    },
  };
}
