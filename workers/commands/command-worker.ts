import { UnrecoverableError, type Job } from 'bullmq';
import { signCommand, verifyCommand } from '../../domain/commands/command-signature';
import { publicReasonOf } from '../../db/commands/db-errors';
import { settleCommand } from '../../infra/pending-commands';
import { publishReply, replyRouteOf } from '../../infra/command-replies';
import { createRedis, quitRedis } from '../../infra/redis';
import type { Command, CommandResult } from '../../domain/commands/command';
import type { BatchCommand, BatchResult } from '../../domain/batch/batch-command';
import { readSettingsOf } from '../../db/query/read-operation';
import { createGroupRunner } from './group-runner';
import { createBatchRunner } from './batch-runner';
import { redisBatchJournal } from './batch-journal';
import type { AppConfig } from '../../infra/config/load-config';
import { BATCH_JOB, QUEUE, type CommandReply } from '../../domain/queues/queue-contracts';
import { createKnex } from '../../db/knex';
import { createLogger, type Logger } from '../../infra/logger';
import { createQueueWorker } from '../shared/worker-process';
import { patchLimitsOf } from '../../infra/config/patch-limits';
import { geometryLimitsOf } from '../../infra/config/geometry-limits';
import { HANDLERS, createCommandRunner, type TestPause } from './command-runner';
import type { GroupOutcome } from './group-runner';
import { OutboxPublisher } from './outbox-publisher';
import { OutboxSweeper } from './outbox-sweeper';
import { startRetentionWorker } from './retention-worker';
import { commandDuration, Registry } from '../../infra/metrics/registry';
import type { RunningWorker } from '../shared/worker-process';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { tracing } from '../../infra/tracing/tracing';
import { requestFields, traceContexts } from '../shared/write-origins';
import type { SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import { createSubscriptionRunner } from './subscription.handler';
import { createGroupCommitRunner } from './group-commit';
import type { DomainEvent } from '../../domain/events/domain-event';

/** Connections for the GETs of batches (a batch reads one GET at a time; a list and its count at once). */
const BATCH_READ_CONNECTIONS = 4;

export interface CommandWorkerOptions {
  logger?: Logger;
  /** Faster stalled-job recovery than BullMQ's 30 s defaults (tests; see main.ts for the env). */
  stalledRecovery?: { lockDuration?: number; stalledInterval?: number };
  testPause?: TestPause;
  outboxSweepIntervalMs?: number;
  /** The process's metrics registry (METRICS_PORT); a registry of the worker's own otherwise. */
  metrics?: Registry;
}

type Outcome = { ok: true } | { ok: false; failure: { kind: string } };

/**
 * `fn`, observing `emapi_command_duration_seconds` {command, entity, outcome} for each run: `ok`,
 * the kind of a domain failure (its result), or `error` when it throws (infrastructure; retried).
 */
function timed<A extends unknown[], R>(
  registry: Registry,
  labelsOf: (first: NoInfer<A>[0]) => { command: string; entity: string },
  outcomeOf: (result: NoInfer<R>) => Outcome,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const histogram = commandDuration(registry);
  return async (...args: A) => {
    const end = histogram.startTimer(labelsOf(args[0]));
    try {
      const result = await fn(...args);
      const outcome = outcomeOf(result);
      end({ outcome: outcome.ok ? 'ok' : outcome.failure.kind });
      return result;
    } catch (err) {
      end({ outcome: 'error' });
      throw err;
    }
  };
}

/**
 * A command worker: consumes the `commands` queue with WORKER_CONCURRENCY jobs at once, runs each
 * in its own transaction and publishes the events they commit (OutboxPublisher, and the
 * OutboxSweeper for what a crash left behind). Used by main.ts and by tests.
 */
export async function startCommandWorker(
  config: AppConfig,
  options: CommandWorkerOptions = {},
): Promise<RunningWorker> {
  const logger = options.logger ?? createLogger('commands', config.logLevel);
  const metrics = options.metrics ?? new Registry();
  // Pipelined: a command's BEGIN and its record's COMMIT go out with the statements next to them.
  const knex = createKnex(config.databaseUrl, config.dbPoolMax, logger, { pipelined: true });
  const redis = createRedis(config.redis, 'worker');
  redis.on('error', (err) => logger.debug({ err: err.message }, 'redis connection error'));
  const replies = createRedis(config.redis, 'producer');
  replies.on('error', (err) => logger.debug({ err: err.message }, 'command replies connection error'));
  const publisher = new OutboxPublisher({
    knex,
    redis: config.redis,
    queuePrefix: config.queuePrefix,
    logger,
    publishWindowMs: config.eventPublishWindowMs,
    durability: config.redisDurability,
  });
  const sweeper = new OutboxSweeper({
    knex,
    logger,
    publish: (events, origins) => publisher.publish(events, origins),
    intervalMs: options.outboxSweepIntervalMs,
  });
  const limits = { patchLimits: patchLimitsOf(config), geometryLimits: geometryLimitsOf(config) };
  const onCommitted = (events: DomainEvent[], origin: WriteOrigin | undefined) => publisher.publishSoon(events, origin);
  const runAlone = createCommandRunner({ knex, logger, onCommitted, testPause: options.testPause, ...limits });
  // Lone commands (the `$batch` writes outside groups) run alone; queued ones are grouped when they arrive together.
  const labelsOf = (command: Command) => ({
    // Only commands the API signed get here; an unknown name fails in the runner, counted as one label.
    command: Object.hasOwn(HANDLERS, command.name) ? command.name : 'unknown',
    entity: command.entity,
  });
  const run = timed(metrics, labelsOf, (result: CommandResult) => result, runAlone);
  const runQueued = timed(
    metrics,
    labelsOf,
    (result: CommandResult) => result,
    createGroupCommitRunner({ knex, logger, limits, runAlone, onCommitted, testPause: options.testPause }),
  );
  const readSettings = readSettingsOf({ maxTop: config.maxTop, limits: config.limits });
  const runGroup = timed(
    metrics,
    () => ({ command: 'group', entity: '$batch' }),
    (outcome: GroupOutcome) => outcome.result,
    createGroupRunner({
      knex,
      logger,
      readSettings,
      groupReadTimeoutMs: config.batch.groupReadTimeoutMs,
      onCommitted: (events, origin) => publisher.publishSoon(events, origin),
      testPause: options.testPause,
      patchLimits: patchLimitsOf(config),
      geometryLimits: geometryLimitsOf(config),
    }),
  );
  // The GETs of batches run on connections of their own: a read sets STATEMENT_TIMEOUT_MS on its
  // connection, which the commands' connections must not carry.
  const readKnex = createKnex(config.databaseUrl, BATCH_READ_CONNECTIONS, logger);
  const journal = redisBatchJournal(redis, config.queuePrefix, logger);
  const runBatch = timed(
    metrics,
    () => ({ command: 'batch', entity: '$batch' }),
    (result: BatchResult | CommandResult) => result,
    createBatchRunner({
      knex,
      readKnex,
      journal,
      runCommand: run,
      runGroup,
      readSettings,
      readTimeoutMs: config.batch.readTimeoutMs,
    }),
  );

  const runSubscription = timed(
    metrics,
    (command: SubscriptionCommand) => ({ command: command.name, entity: 'Subscription' }),
    (result: CommandResult) => result,
    createSubscriptionRunner({
      knex,
      logger,
      maxSubscriptions: config.webhooks.maxSubscriptions,
      limits: config.webhooks.limits,
    }),
  );

  /**
   * Verifies a job's signature, runs it and settles its pending count: a command or a whole batch.
   * Only infrastructure errors fail a job (domain failures are its result); BullMQ retries those.
   * Every line logged about it names its request (`requestId`), and with tracing on it runs in a
   * span of its request's trace, its SQL statements within.
   */
  function handler<T extends { commandId: string; subject: string; origin?: WriteOrigin }, R>(
    apply: (data: T, options: { redelivered: boolean; job: Job; logger: Logger }) => Promise<R>,
  ) {
    return async (job: Job): Promise<R> => {
      if (!verifyCommand(job.data, config.commandSigningKey)) {
        // Not from an API of this deployment: never applied, never retried, and said loudly.
        logger.warn(
          { jobId: job.id, name: job.name, subject: (job.data as { subject?: unknown })?.subject },
          'command refused: its signature does not verify (COMMAND_SIGNING_KEY)',
        );
        throw new UnrecoverableError("refused: the command is not signed with this deployment's COMMAND_SIGNING_KEY");
      }
      const command = job.data as T;
      const log = logger.child({ ...requestFields([command.origin]), commandId: command.commandId });
      const [parent] = traceContexts([command.origin]);
      const attributes = {
        'messaging.system': 'bullmq',
        'messaging.destination.name': QUEUE.commands,
        'messaging.message.id': command.commandId,
      };
      const span = { kind: 'consumer', parent, attributes, requestId: command.origin?.requestId } as const;
      return tracing().inSpan(`process ${job.name}`, span, async () => {
        try {
          // A job started before (retry, or recovered after its worker died) may have committed already.
          const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
          const result = await apply(command, { redelivered, job, logger: log });
          settle(command);
          // A command's result goes to the API now, ahead of BullMQ marking its job completed (one
          // Redis round trip and a script later); a batch's, possibly megabytes, is read from its job.
          if (job.name !== BATCH_JOB) reply(job, { jobId: job.id!, result });
          log.debug({ name: job.name, redelivered, ok: (result as { ok?: boolean })?.ok }, 'command done');
          return result;
        } catch (err) {
          // The full error (statement included) is for the log; the job's reason, shown by /Jobs and
          // Bull Board, says only what kind of failure it was.
          log.warn({ jobId: job.id, err }, 'command failed on infrastructure; BullMQ retries it');
          if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) settle(command);
          throw new Error(publicReasonOf(err), { cause: err });
        }
      });
    };
  }
  /**
   * A finished batch's response is in the command log: its job keeps only what names it (id,
   * caller, Idempotency-Key fingerprint), signed again, so a body of up to BATCH_MAX_BYTES does not
   * stay in Redis for the job's retention. Run again (a crash before the job was marked done), the
   * stub finds the recorded response. Best effort: a failure leaves the full job.
   */
  async function compactFinishedBatch(job: Job, batch: BatchCommand, logger: Logger): Promise<void> {
    const { signature: _signature, ...content } = batch as BatchCommand & { signature?: string };
    const stub = signCommand({ ...content, steps: [] }, config.commandSigningKey);
    await job.updateData(stub).catch((err: unknown) => {
      logger.debug({ jobId: job.id, err: (err as Error).message }, 'finished batch not compacted');
    });
  }

  /**
   * Tells the API process that queued `job` it is done (infra/command-replies.ts), written right after settle's
   * command. On a connection of its own that fails fast: a reply Redis cannot take now is dropped
   * (the API reads the job instead), never queued for a reconnect that would outlive the worker.
   */
  const reply = (job: Job, message: CommandReply) => {
    publishReply(replies, config.queuePrefix, message, replyRouteOf(job.data)).catch((err: unknown) =>
      logger.debug({ err: (err as Error).message }, 'command reply not published (the API polls the job)'),
    );
  };

  /** The command no longer counts against its subject's MAX_PENDING_COMMANDS_PER_SUBJECT. */
  const settle = (command: { commandId: string; subject: string }) => {
    settleCommand(redis, config.queuePrefix, command.subject, command.commandId).catch((err: unknown) =>
      logger.debug({ err: (err as Error).message }, 'pending count not updated'),
    );
  };
  const worker = createQueueWorker({
    queue: QUEUE.commands,
    redis: config.redis,
    queuePrefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    logger,
    handlers: {
      command: handler<Command, CommandResult>((command, { redelivered, logger }) =>
        runQueued(command, { redelivered, logger }),
      ),
      batch: handler<BatchCommand, BatchResult | CommandResult>(async (batch, { redelivered, job, logger }) => {
        const result = await runBatch(batch, {
          redelivered,
          logger,
          // Units done so far, for /Jobs and Bull Board (a failed report costs the batch nothing).
          onProgress: (progress) => void job.updateProgress(progress).catch(() => undefined),
        });
        await compactFinishedBatch(job, batch, logger);
        return result;
      }),
      subscription: handler<SubscriptionCommand, CommandResult>((command, { redelivered, logger }) =>
        runSubscription(command, { redelivered, logger }),
      ),
    },
    // A command whose worker died twice is failed (the API answers 503, a repeat runs it again)
    // rather than taking down every worker that picks it up.
    stalledRecovery: { maxStalledCount: 2, ...options.stalledRecovery },
  });
  worker.on('completed', (job) => {
    if (job.name === BATCH_JOB) reply(job, { jobId: job.id!, finished: true });
  });
  worker.on('failed', (job) => {
    // The last attempt only: a retried job is still pending for the API.
    if (job?.id && job.attemptsMade >= (job.opts.attempts ?? 1))
      reply(job, { jobId: job.id, failedReason: job.failedReason });
  });
  await worker.waitUntilReady();
  const retention = await startRetentionWorker(config, knex, logger);
  return {
    metrics,
    async close() {
      await retention.close();
      await worker.close();
      await sweeper.close();
      await publisher.close();
      replies.disconnect();
      await Promise.allSettled([knex.destroy(), readKnex.destroy(), quitRedis(redis)]);
    },
  };
}
