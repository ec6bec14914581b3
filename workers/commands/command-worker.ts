import type { Job } from 'bullmq';
import { COMMAND_NAMES, type Command } from '../../domain/commands/command';
import type { AppConfig } from '../../domain/config/load-config';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { createKnex } from '../../db/knex';
import { createLogger, type Logger } from '../../db/infra/logger';
import { createQueueWorker } from '../shared/run-worker';
import { createCommandRunner, type TestPause } from './command-runner';
import { startOutboxRelay } from './outbox-relay';
import { startRetentionWorker } from './retention-worker';

export interface CommandWorkerOptions {
  logger?: Logger;
  /** Faster stalled-job recovery than BullMQ's 30 s defaults (tests; see main.ts for the env). */
  stalledRecovery?: { lockDuration?: number; stalledInterval?: number };
  testPause?: TestPause;
  outboxSweepIntervalMs?: number;
}

/**
 * A command worker: consumes the `commands` queue with WORKER_CONCURRENCY jobs at once, runs each
 * in its own transaction and relays the events they commit. Used by main.ts and by tests.
 */
export async function startCommandWorker(
  config: AppConfig,
  options: CommandWorkerOptions = {},
): Promise<{ close(): Promise<void> }> {
  const logger = options.logger ?? createLogger('commands', config.logLevel);
  const knex = createKnex(config.databaseUrl, config.dbPoolMax, logger);
  const relay = startOutboxRelay({
    knex,
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    logger,
    sweepIntervalMs: options.outboxSweepIntervalMs,
    publishWindowMs: config.eventPublishWindowMs,
  });
  const run = createCommandRunner({
    knex,
    logger,
    onCommitted: (events) => relay.publishSoon(events),
    testPause: options.testPause,
  });
  // A job started before (retry, or recovered after its worker died) may have committed already.
  const handle = (job: Job) =>
    run(job.data as Command, { redelivered: job.attemptsStarted > 1 || job.stalledCounter > 0 });
  const worker = createQueueWorker({
    queue: QUEUE.commands,
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    logger,
    handlers: Object.fromEntries(COMMAND_NAMES.map((name) => [name, handle])),
    expectedJobNames: COMMAND_NAMES,
    stalledRecovery: options.stalledRecovery,
  });
  await worker.waitUntilReady();
  const retention = await startRetentionWorker(config, knex, logger);
  return {
    async close() {
      await retention.close();
      await worker.close();
      await relay.close();
      await knex.destroy();
    },
  };
}
