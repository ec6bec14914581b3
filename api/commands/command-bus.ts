import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import type { Logger } from '../../infra/logger';
import type { AppConfig, RedisTarget } from '../../infra/config/load-config';
import { createRedis, type RedisClient } from '../../infra/redis';
import { commandRepliesChannel, parseReply } from '../../infra/command-replies';
import { openQueue } from '../../infra/queues';
import type { Command, CommandResult } from '../../domain/commands/command';
import { conflict, tooManyRequests } from '../../domain/errors/domain-error';
import { admitCommand, settleCommand } from '../../infra/pending-commands';
import { batchJob, commandJob, subscriptionCommandJob } from '../../domain/queues/job-registry';
import { isSubscriptionCommandName, type SubscriptionCommand } from '../../domain/webhooks/subscription-command';
import type { BatchCommand, BatchResult } from '../../domain/batch/batch-command';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { IDEMPOTENCY_KEY_REUSED } from '../../domain/writes/command-ids';
import { signCommand, signCommandInSlices } from '../../domain/commands/command-signature';
import { turnSlicer } from '../limits/turn-slicer';

/**
 * The API's side of the `commands` queue (DESIGN §1, §11): one Queue per process, and one
 * subscription to the command workers' replies (infra/command-replies.ts), both ready before the
 * API serves. A command is enqueued as its registry job (job id = command id, retries and
 * retention: domain/queues/job-registry.ts) and awaited until COMMAND_TIMEOUT_MS.
 *
 * The wait registers for the job's reply before the job is added, so no reply can slip past it,
 * and falls back to reading the job's state (a reply published while this process was
 * disconnected is gone; a repeated Idempotency-Key finds a job that finished long ago). BullMQ's
 * QueueEvents is not used: it woke the process three times per job and wrote its next XREAD
 * before the answer (issue 28). `job.waitUntilFinished` is not used either: it reads the job's
 * state inside an `async` Promise executor, so a Redis error there becomes an unhandled rejection
 * that takes the whole process down.
 */

export type Dispatched<R = CommandResult> =
  | { state: 'finished'; result: R }
  /**
   * The job failed on its last attempt or stalled too often: an infrastructure error, not the
   * client's. Nothing was applied; the API answers 503 and a repeat runs it again.
   */
  | { state: 'failed'; reason: string }
  /** Still queued or running at the deadline; it may yet commit. */
  | { state: 'pending' };

export interface JobStatus {
  subject: string;
  /** The job is a `$batch`. */
  batch: boolean;
  /** A command's result, or a batch's (its response, or the failure of a reused Idempotency-Key). */
  dispatched: Dispatched<CommandResult | BatchResult>;
}

/** What the API queues: a command, a whole `$batch` or a subscription write (one job each). */
type Queued = Command | BatchCommand | SubscriptionCommand;

/**
 * Redis is unreachable (503, DESIGN §6). `maybeQueued` is false when nothing was sent; true when
 * the connection failed while the job was on its way, so Redis may have stored it and a worker
 * may yet apply the command.
 */
export class QueueUnavailableError extends Error {
  constructor(
    cause: unknown,
    readonly maybeQueued: boolean,
  ) {
    super('the command queue is unreachable', { cause });
    this.name = 'QueueUnavailableError';
  }
}

export interface CommandBus {
  /** Enqueues `command` and waits for its outcome until `timeoutMs` has passed. */
  dispatch(command: Command, timeoutMs: number): Promise<Dispatched>;
  dispatch(batch: BatchCommand, timeoutMs: number): Promise<Dispatched<BatchResult | CommandResult>>;
  dispatch(command: SubscriptionCommand, timeoutMs: number): Promise<Dispatched>;
  /** The state of a job still kept by the queue, or null. */
  jobStatus(commandId: string): Promise<JobStatus | null>;
  /** The channel this process's replies come on: its jobs name its route (infra/command-replies.ts). */
  readonly replyChannel: string;
  close(): Promise<void>;
}

export interface CommandBusOptions {
  /** The API's producer connection (fails fast while Redis is down). */
  redis: RedisClient;
  /** Where Redis is: the replies subscription gets a connection of its own there. */
  redisTarget: RedisTarget;
  /** QUEUE_PREFIX: the prefix of the pending-command counts, and of the commands queue's keys. */
  prefix: string;
  logger: Logger;
  /** COMMAND_SIGNING_KEY: every command is signed with it (workers refuse what does not verify). */
  signingKey: string;
  /** MAX_PENDING_COMMANDS_PER_SUBJECT: commands one subject may have queued or running. */
  maxPendingPerSubject: number;
}

type Outcome = Dispatched<CommandResult | BatchResult>;

/** How often a waiting request re-reads its job when no event has come. */
const POLL_INTERVAL_MS = 1000;
/** A repeat's second look: a job whose reply went out just before it was marked completed (a fraction of a millisecond). */
const REPEAT_RECHECK_MS = 50;

/** The bus of an API built from its configuration (api/main.ts and the test stack alike). */
export function commandBusOptionsOf(config: AppConfig, redis: RedisClient, logger: Logger): CommandBusOptions {
  return {
    redis,
    redisTarget: config.redis,
    prefix: config.queuePrefix,
    logger,
    signingKey: config.commandSigningKey,
    maxPendingPerSubject: config.limits.maxPendingCommandsPerSubject,
  };
}

/**
 * Once Redis holds a batch, the API needs only its id, subject and fingerprint while it waits for
 * the worker (seconds, for 1,000 writes). Its steps (up to 16 MiB) are emptied in place, so that no
 * holder of the command (the route, sendCommand, this bus) keeps them alive: eight batches in
 * flight held ~130 MiB and made the API's full collections take 100+ ms.
 */
function dropSteps(batch: BatchCommand): void {
  batch.steps.length = 0;
}

/** A batch's signature is computed a few milliseconds at a time (up to 16 MiB of text). */
const SIGN_SLICE_MS = 10;

/** The signed job of what the API queues. */
async function jobOf(command: Queued, signingKey: string) {
  if (command.name === 'batch') {
    return batchJob(await signCommandInSlices(command, signingKey, turnSlicer(SIGN_SLICE_MS)));
  }
  if (isSubscriptionCommandName(command.name)) {
    return subscriptionCommandJob(signCommand(command as SubscriptionCommand, signingKey));
  }
  return commandJob(signCommand(command as Command, signingKey));
}

export async function createCommandBus(options: CommandBusOptions): Promise<CommandBus> {
  const { logger } = options;
  const queues = { redis: options.redisTarget, queuePrefix: options.prefix };
  const queue = openQueue(queues, QUEUE.commands, { shared: options.redis }, (err) =>
    logger.warn({ err: err.message }, 'command queue error'),
  );
  // A connection of its own (a subscribed connection serves nothing else); it reconnects within 2 s
  // once Redis is back and subscribes again (ioredis), replies sent meanwhile are found by the poll.
  const replies = createRedis(options.redisTarget, 'worker');
  replies.on('error', (err: Error) => logger.warn({ err: err.message }, 'command replies error'));
  // This process's route: its jobs name it, so their replies wake it alone, not every API process.
  const route = randomUUID();
  const replyChannel = commandRepliesChannel(options.prefix, route);

  // Requests waiting per command id (several when an Idempotency-Key is repeated concurrently).
  const waiters = new Map<string, Set<(outcome: Outcome) => void>>();
  const notify = (jobId: string, outcome: Outcome) => waiters.get(jobId)?.forEach((settle) => settle(outcome));
  replies.on('message', (_channel: string, message: string) => {
    const reply = parseReply(message);
    if (!reply || !waiters.has(reply.jobId)) return;
    if ('result' in reply) notify(reply.jobId, { state: 'finished', result: reply.result as CommandResult });
    else if ('failedReason' in reply) notify(reply.jobId, { state: 'failed', reason: reply.failedReason });
    else {
      // A finished batch: its result is read from its job.
      readOutcome(reply.jobId).then(
        (status) => status && status.dispatched.state !== 'pending' && notify(reply.jobId, status.dispatched),
        (err: unknown) =>
          logger.warn({ commandId: reply.jobId, err: (err as Error).message }, 'reading command state failed'),
      );
    }
  });
  // The shared channel too: a job queued before routes existed is answered there.
  await Promise.all([queue.waitUntilReady(), replies.subscribe(replyChannel, commandRepliesChannel(options.prefix))]);

  async function readOutcome(commandId: string): Promise<JobStatus | null> {
    // State first: a job seen finished here has its return value in the hash read after it.
    const state = await queue.getJobState(commandId);
    if (state === 'unknown') return null;
    const job = (await Job.fromId(queue, commandId)) as Job<Queued, CommandResult | BatchResult> | undefined;
    if (!job) return null;
    const subject = job.data.subject;
    const batch = job.data.name === 'batch';
    if (state === 'completed' && job.returnvalue) {
      return { subject, batch, dispatched: { state: 'finished', result: job.returnvalue } };
    }
    if (state === 'failed') return { subject, batch, dispatched: { state: 'failed', reason: job.failedReason } };
    return { subject, batch, dispatched: { state: 'pending' } };
  }

  /** Registers for the outcome of `id`; settles once, from an event, a poll or the deadline. */
  function waitFor(id: string) {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let settle!: (outcome: Outcome) => void;
    const outcome = new Promise<Outcome>((resolve) => {
      settle = (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      };
    });
    if (!waiters.has(id)) waiters.set(id, new Set());
    waiters.get(id)!.add(settle);
    return {
      outcome,
      settle,
      get settled() {
        return settled;
      },
      /** Resolves after `ms`, or at once when the wait settles. (No AbortSignal: aborting builds an error with a stack per request.) */
      pause(ms: number): Promise<void> {
        return new Promise((resolve) => {
          if (settled) return resolve();
          timer = setTimeout(resolve, ms);
          void outcome.then(() => resolve());
        });
      },
      release() {
        settle({ state: 'pending' });
        const waiting = waiters.get(id);
        waiting?.delete(settle);
        if (waiting?.size === 0) waiters.delete(id);
      },
    };
  }

  /**
   * Reads the job's state after each of `delays`, then every POLL_INTERVAL_MS (a reply can be
   * missed), and once more at the deadline.
   */
  async function pollUntil(
    id: string,
    wait: ReturnType<typeof waitFor>,
    deadline: number,
    delays: readonly number[] = [POLL_INTERVAL_MS],
  ) {
    const next = delays[Symbol.iterator]();
    while (!wait.settled) {
      const pause = Math.min(next.next().value ?? POLL_INTERVAL_MS, deadline - Date.now());
      if (pause > 0) await wait.pause(pause);
      if (wait.settled) return;
      const final = Date.now() >= deadline;
      const status = await readOutcome(id).catch((err: unknown) => {
        logger.warn({ commandId: id, err: (err as Error).message }, 'reading command state failed');
        return null;
      });
      if (status && status.dispatched.state !== 'pending') wait.settle(status.dispatched);
      else if (final) wait.settle({ state: 'pending' });
    }
  }

  /** A repeated Idempotency-Key finds the first request's job: only the same request shares its outcome. */
  async function clashesWithFirst(command: Queued): Promise<boolean> {
    try {
      const first = (await Job.fromId(queue, command.commandId)) as Job<Queued> | undefined;
      return first !== undefined && first.data.requestHash !== command.requestHash;
    } catch {
      return false; // the worker compares the request hashes too (command_log)
    }
  }

  /**
   * A job that failed did so for a reason that was not the client's (domain failures are results,
   * not failed jobs): a store outage, a worker that kept crashing. Its Idempotency-Key must not keep
   * that answer (DESIGN §13), so a repeat of the same request puts the same job back to run. Two
   * repeats at once race for it; the loser finds it no longer failed, which is just as good.
   */
  async function runAgainIfFailed(commandId: string): Promise<void> {
    try {
      const job = (await Job.fromId(queue, commandId)) as Job<Queued> | undefined;
      if (job && (await job.getState()) === 'failed') {
        await job.retry('failed');
        logger.info({ commandId }, 'repeated request: running a command whose job had failed');
      }
    } catch (err) {
      logger.debug({ commandId, err: (err as Error).message }, 'failed job not retried (already running again?)');
    }
  }

  /**
   * Adds the job; false when Redis has not confirmed it by the deadline (a connection that hangs
   * rather than fails): it may still arrive, so the caller is told the command is pending.
   */
  async function enqueue(command: Queued, deadline: number): Promise<boolean> {
    if (options.redis.status !== 'ready') {
      throw new QueueUnavailableError(`redis connection is ${options.redis.status}`, false);
    }
    const job = await jobOf({ ...command, replyTo: route }, options.signingKey);
    // BullMQ serialises and writes a batch of up to 16 MiB in one turn (~40 ms): other callers get
    // a turn between the signing's last slice and it (the hostile fuzz of bench/README.md).
    if (command.name === 'batch') await new Promise((resolve) => setImmediate(resolve));
    const added = queue.add(job.name, job.data, job.opts).then(
      () => {
        if (command.name === 'batch') dropSteps(command as BatchCommand);
        return true;
      },
      (err: unknown) => {
        throw new QueueUnavailableError(err, true);
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    // Promise.race handles a late rejection of `added`; nothing is left unhandled.
    const inTime = await Promise.race([added, late]).finally(() => clearTimeout(timer));
    if (!inTime) logger.warn({ commandId: command.commandId }, 'enqueue not confirmed by the deadline');
    return inTime;
  }

  /**
   * What a job weighs against MAX_PENDING_COMMANDS_PER_SUBJECT: a command 1, a `$batch` the writes
   * it holds (at least 1). A batch holding more writes than the whole allowance weighs all of it:
   * it is admitted only when its caller has nothing else pending, and holds every slot while it runs.
   */
  function weightOf(command: Queued): number {
    if (command.name !== 'batch') return 1;
    const writes = (command as BatchCommand).steps.filter((step) => step.write !== undefined).length;
    return Math.min(Math.max(1, writes), options.maxPendingPerSubject);
  }

  /** Counts the job against its subject's MAX_PENDING_COMMANDS_PER_SUBJECT, or refuses it (429). */
  async function admit(command: Queued): Promise<void> {
    const weight = weightOf(command);
    let admitted: boolean;
    try {
      admitted = await admitCommand(
        options.redis,
        options.prefix,
        command.subject,
        command.commandId,
        options.maxPendingPerSubject,
        weight,
      );
    } catch (err) {
      throw new QueueUnavailableError(err, false);
    }
    if (!admitted) {
      const what = command.name === 'batch' ? `this batch counts as ${weight}; ` : '';
      throw tooManyRequests(
        `Too many commands pending: ${what}at most ${options.maxPendingPerSubject} queued or running per caller (MAX_PENDING_COMMANDS_PER_SUBJECT); wait for some to finish.`,
        1,
      );
    }
  }

  function settle(command: Queued): void {
    settleCommand(options.redis, options.prefix, command.subject, command.commandId).catch((err: unknown) =>
      logger.debug({ commandId: command.commandId, err: (err as Error).message }, 'pending count not updated'),
    );
  }

  async function dispatch(command: Queued, timeoutMs: number): Promise<Outcome> {
    const id = command.commandId;
    const deadline = Date.now() + timeoutMs;
    await admit(command);
    const wait = waitFor(id);
    let outcome: Outcome = { state: 'pending' };
    try {
      outcome = await sendAndWait(command, wait, deadline);
      return outcome;
    } catch (err) {
      // Nothing was queued (or it may have been: then the worker settles it when it runs).
      if (!(err instanceof QueueUnavailableError && err.maybeQueued))
        outcome = { state: 'failed', reason: 'not queued' };
      throw err;
    } finally {
      // A command its worker ran was settled by that worker. One that failed (stalled too often, or
      // was never queued) may have no worker left to do it, and the repeat of an Idempotency-Key
      // whose job finished long ago has none at all.
      if (outcome.state === 'failed' || (outcome.state === 'finished' && command.requestHash)) settle(command);
      wait.release();
    }
  }

  /** Enqueues the command (runs a failed repeat again) and waits for its outcome until the deadline. */
  async function sendAndWait(command: Queued, wait: ReturnType<typeof waitFor>, deadline: number): Promise<Outcome> {
    if (!(await enqueue(command, deadline))) return { state: 'pending' };
    let polls = [POLL_INTERVAL_MS];
    if (command.requestHash) {
      if (await clashesWithFirst(command)) {
        return { state: 'finished', result: { ok: false, failure: conflict([IDEMPOTENCY_KEY_REUSED]).toFailure() } };
      }
      await runAgainIfFailed(command.commandId);
      // The first request's job may have finished long ago, or a moment ago: its reply went out
      // before BullMQ marked it completed, so a read at once can still find it active.
      polls = [0, REPEAT_RECHECK_MS];
    }
    void pollUntil(command.commandId, wait, deadline, polls);
    return wait.outcome;
  }

  return {
    dispatch: dispatch as CommandBus['dispatch'],
    jobStatus: readOutcome,
    replyChannel,
    async close() {
      for (const waiting of waiters.values()) waiting.forEach((settle) => settle({ state: 'pending' }));
      // disconnect, not quit: a Cluster client whose subscriber lost its node could still be
      // reconnecting, and quit would leave it to (the process would not exit).
      replies.disconnect();
      await queue.close().catch(() => undefined);
    },
  };
}
