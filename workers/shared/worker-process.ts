import type { BackoffStrategy } from 'bullmq';
import { QueueWorker } from './queue-worker';
import { queuePrefix, withBullConnection } from '../../infra/redis';
import { isClusterPrimary, runClusterPrimary } from '../../infra/cluster-primary';
import { primaryLogLevel, processCount, type ProcessCountVariable } from '../../infra/config/entry-point-config';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { createLogger, type Logger } from '../../infra/logger';
import { exitOnSignals } from '../../infra/shutdown';
import type { AppConfig, RedisTarget } from '../../infra/config/load-config';
import { loadConfig } from '../../infra/config/load-config';
import { JobDispatcher, type JobHandlers } from './job-dispatcher';
import { requestFieldsOfJob } from './write-origins';
import type { QueueName } from '../../domain/queues/queue-contracts';
import { Registry, processRegistry } from '../../infra/metrics/registry';
import { serveMetrics } from '../../infra/metrics/metrics-server';
import { isClusterChild, joinClusterMetrics } from '../../infra/metrics/cluster-metrics';

/** How long a stopping worker waits for its active jobs before exiting anyway. */
const CLOSE_TIMEOUT_MS = 15_000;

/** What a worker kind needs to run: config, its own database pool, logger and metrics registry. */
export interface WorkerContext {
  config: AppConfig;
  knex: Knex;
  logger: Logger;
  metrics: Registry;
}

export interface RunningWorker {
  /** The worker's metrics (its process's registry, or one of its own when started in a test). */
  metrics: Registry;
  close(): Promise<void>;
}

/** Starts a worker kind; `metrics` is the process's registry when it serves METRICS_PORT. */
export type WorkerStart = (config: AppConfig, logger: Logger, metrics?: Registry) => Promise<RunningWorker>;

function workerContext(config: AppConfig, component: string, metrics: Registry | undefined): WorkerContext {
  const logger = createLogger(component, config.logLevel);
  const knex = createKnex(config.databaseUrl, config.dbPoolMax, logger);
  return { config, knex, logger, metrics: metrics ?? new Registry() };
}

export interface WorkerProcessOptions {
  /** Environment variable naming how many processes to run under one primary (default one, no primary). */
  processesVariable?: ProcessCountVariable;
}

/** Where the primary serves its processes' metrics: METRICS_PORT, when the configuration reads. */
function primaryMetricsAt(logger: Logger): { port: number; host: string } | undefined {
  try {
    const config = loadConfig();
    return config.metrics.port === undefined ? undefined : { port: config.metrics.port, host: config.listenHost };
  } catch (err) {
    // Each process refuses the same configuration and says why; the primary only skips its metrics.
    logger.debug({ err: (err as Error).message }, 'no metrics port: the configuration does not read');
    return undefined;
  }
}

/**
 * Entry point of every worker process (`npm run worker:*`): configuration only from the
 * environment, optionally several processes under one primary (a process that dies is replaced),
 * closed cleanly on SIGTERM/SIGINT. With METRICS_PORT a lone process serves its metrics there;
 * under a primary the primary serves the sum of its processes' (infra/metrics/cluster-metrics.ts).
 */
export function runWorkerProcess(name: string, start: WorkerStart, options: WorkerProcessOptions = {}): void {
  const processes = options.processesVariable ? processCount(options.processesVariable) : 1;
  if (processes > 1 && isClusterPrimary()) {
    const logger = createLogger(`${name}-primary`, primaryLogLevel());
    runClusterPrimary(processes, logger, { metricsAt: primaryMetricsAt(logger) });
    return;
  }
  const boot = async () => {
    const config = loadConfig();
    const logger = createLogger(name, config.logLevel);
    const port = config.metrics.port;
    const registry = port === undefined ? undefined : processRegistry();
    const running = await start(config, logger, registry);
    let server: { close(): Promise<void> } | undefined;
    if (registry && isClusterChild()) joinClusterMetrics(registry);
    else if (registry && port !== undefined) {
      const scrape = async () => ({ contentType: registry.contentType, text: await registry.metrics() });
      server = await serveMetrics({ port, host: config.listenHost, logger, scrape });
    }
    logger.info({ concurrency: config.workerConcurrency }, `${name} worker ready`);
    // `worker.close()` waits for active jobs without bound: an unfinished one is recovered as stalled.
    exitOnSignals(logger, {
      what: 'active jobs',
      graceMs: CLOSE_TIMEOUT_MS,
      close: async () => {
        await server?.close();
        await running.close();
      },
    });
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
  metrics?: Registry,
): Promise<RunningWorker> {
  const ctx = workerContext(config, queue, metrics);
  let worker: QueueWorker;
  try {
    worker = createQueueWorker({
      queue,
      redis: config.redis,
      queuePrefix: config.queuePrefix,
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
    metrics: ctx.metrics,
    async close() {
      await worker.close();
      await ctx.knex.destroy();
    },
  };
}

export interface RunWorkerOptions<Q extends QueueName> {
  queue: Q;
  /** Where Redis is, and QUEUE_PREFIX: the worker's BullMQ prefix is `queuePrefix(options, queue)`. */
  redis: RedisTarget;
  queuePrefix: string;
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
  /** The queue's custom backoff (job option `backoff.type` other than exponential/fixed). */
  backoffStrategy?: BackoffStrategy;
}

/**
 * A BullMQ worker of `queue` with one processor, the queue's JobDispatcher. How long finished jobs
 * stay is each job's own option (domain/queues/job-registry.ts), so the worker sets none.
 */
export function createQueueWorker<Q extends QueueName>(options: RunWorkerOptions<Q>): QueueWorker {
  const dispatcher = new JobDispatcher(options.queue, options.handlers, options.logger);
  const worker = withBullConnection(
    options.redis,
    'worker',
    (connection) =>
      new QueueWorker(options.queue, dispatcher.process, {
        connection,
        prefix: queuePrefix(options, options.queue),
        concurrency: options.concurrency,
        ...(options.backoffStrategy ? { settings: { backoffStrategy: options.backoffStrategy } } : {}),
        ...Object.fromEntries(Object.entries(options.stalledRecovery ?? {}).filter(([, v]) => v !== undefined)),
      }),
  );
  worker.on('failed', (job, err) => {
    options.logger.warn(
      { ...requestFieldsOfJob(job?.data), queue: options.queue, jobId: job?.id, name: job?.name, err: err.message },
      'job failed',
    );
  });
  worker.on('error', (err) => options.logger.error({ queue: options.queue, err: err.message }, 'worker error'));
  return worker;
}
