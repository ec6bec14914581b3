import { createHash } from 'node:crypto';
import { COMMAND_NAMES } from '../commands/command';
import type { Signed, SignedCommand } from '../commands/command-signature';
import type { BatchCommand } from '../batch/batch-command';
import { ALL_EVENT_NAMES, type DomainEvent } from '../events/domain-event';
import type { AddedJobOptions, JobOptions } from './job-options';
import { isWriteOrigin, type WriteOrigin } from '../commands/write-origin';
import { SUBSCRIPTION_COMMAND_NAMES, type SubscriptionCommand } from '../webhooks/subscription-command';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../webhooks/retry-schedule';
import {
  BATCH_JOB,
  EVENT_BURST_JOB,
  PRUNE_RETENTION_JOB,
  QUEUE,
  REBUILD_VIEWS_JOB,
  WEBHOOK_BACKOFF,
  WEBHOOK_DELIVERY_JOB,
  type QueueName,
} from './queue-contracts';

/**
 * The job registry: every kind of job the service adds, the queues it goes to, the names producers
 * give it and how it is retried and kept. Producers build their jobs here (commandJob, eventJob,
 * rebuildViewsJob, pruneRetentionSchedule); a worker registers one handler per kind of its queue
 * (workers/shared/job-dispatcher.ts) and refuses to start without one, so every name sent is handled.
 */

/** One kind of job. */
interface JobContract {
  /** Queues the job is added to: an event is one job on each of its consumers' queues. */
  readonly queues: readonly QueueName[];
  /** Every name producers give such a job (the command's name, the event's name, …). */
  readonly names: readonly string[];
  readonly options: JobOptions;
}

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;

/** Commands and batches: retried past a store blip (domain failures are results, never retried). */
const COMMAND_RETRIES = { attempts: 3, backoff: { type: 'exponential', delay: 500 } } as const;

/** Finished jobs kept an hour, failed ones a week, at most `count` of each (awaiting callers, /Commands, /Jobs). */
const kept = (count: number) =>
  ({ removeOnComplete: { age: HOUR_S, count }, removeOnFail: { age: 7 * DAY_S, count } }) as const;

/** Event jobs, bursts or single: retried past a store blip, kept like commands. */
const EVENT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  ...kept(10_000),
} as const satisfies JobOptions;

export const JOBS = {
  /**
   * A write for the command workers. Only infrastructure errors fail one (a domain failure is its
   * result), so the retries ride out a store blip. Kept for awaiting callers and /Commands.
   */
  command: {
    queues: [QUEUE.commands],
    names: COMMAND_NAMES,
    options: { ...COMMAND_RETRIES, ...kept(10_000) },
  },
  /**
   * A `$batch` for the command workers (DESIGN §12): its units run in order, each recorded in the
   * command log, so a retry or a recovered job replays what committed and applies only the rest.
   * Its result is the whole batch response, so fewer are kept than commands.
   */
  batch: {
    queues: [QUEUE.commands],
    names: [BATCH_JOB],
    options: { ...COMMAND_RETRIES, ...kept(1_000) },
  },
  /**
   * A burst of committed domain events, for the search read model and the activity log: what the
   * relay publishes, one job per burst (up to EVENT_BURST_MAX events) per consumer queue.
   */
  eventBurst: {
    queues: [QUEUE.views, QUEUE.notifications],
    names: [EVENT_BURST_JOB],
    options: EVENT_JOB_OPTIONS,
  },
  /**
   * One committed domain event as its own job (job name = event name): how releases before bursts
   * published, still handled so jobs queued before an upgrade are not stranded, and a way to
   * redeliver one event by hand.
   */
  event: {
    queues: [QUEUE.views, QUEUE.notifications],
    names: ALL_EVENT_NAMES,
    options: EVENT_JOB_OPTIONS,
  },
  /**
   * A write of a webhook subscription (DESIGN §16) for the command workers: applied in one
   * transaction with its command_log row like an entity command, no events.
   */
  subscription: {
    queues: [QUEUE.commands],
    names: SUBSCRIPTION_COMMAND_NAMES,
    options: { ...COMMAND_RETRIES, ...kept(1_000) },
  },
  /**
   * One event POSTed to one subscription (DESIGN §16). Attempted once plus once per entry of
   * WEBHOOK_RETRY_SCHEDULE (the producer sets `attempts` from it; the default schedule's here), the
   * waits from the worker's custom backoff; then failed, kept a week for /Jobs and Bull Board, where
   * it can be retried by hand.
   */
  webhookDelivery: {
    queues: [QUEUE.webhooks],
    names: [WEBHOOK_DELIVERY_JOB],
    options: {
      attempts: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE).length + 1,
      backoff: { type: WEBHOOK_BACKOFF, delay: 0 },
      ...kept(10_000),
    },
  },
  /** A rebuild of every read model (`POST /Jobs/RebuildViews`): retried past a transient database failure. */
  rebuildViews: {
    queues: [QUEUE.views],
    names: [REBUILD_VIEWS_JOB],
    options: {
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: { age: 7 * DAY_S, count: 1_000 },
      removeOnFail: { age: 30 * DAY_S, count: 1_000 },
    },
  },
  /** Pruning of the outbox and the command log: not retried, the next scheduled run goes on. */
  pruneRetention: {
    queues: [QUEUE.maintenance],
    names: [PRUNE_RETENTION_JOB],
    options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  },
} as const satisfies Record<string, JobContract>;

export type JobKind = keyof typeof JOBS;

/** The kinds of job added to queue `Q`: a worker of `Q` has a handler for each. */
export type JobKindOn<Q extends QueueName> = {
  [K in JobKind]: Q extends (typeof JOBS)[K]['queues'][number] ? K : never;
}[JobKind];

const KINDS = Object.keys(JOBS) as JobKind[];

/** The kinds of job added to `queue`. */
export function jobKindsOn(queue: QueueName): JobKind[] {
  return KINDS.filter((kind) => (JOBS[kind].queues as readonly QueueName[]).includes(queue));
}

/** Per queue, the kind of each job name: a name must not mean two kinds on one queue. */
const KIND_BY_NAME = new Map<QueueName, Map<string, JobKind>>(
  Object.values(QUEUE).map((queue) => {
    const byName = new Map<string, JobKind>();
    for (const kind of jobKindsOn(queue)) {
      for (const name of JOBS[kind].names) {
        const other = byName.get(name);
        if (other) throw new Error(`job name '${name}' is both ${other} and ${kind} on queue ${queue}`);
        byName.set(name, kind);
      }
    }
    return [queue, byName];
  }),
);

/** The kind of the job `name` on `queue`; undefined for a name no producer sends there. */
export function jobKindOf(queue: QueueName, name: string): JobKind | undefined {
  return KIND_BY_NAME.get(queue)?.get(name);
}

/** A job as a producer adds it: `queue.add(name, data, opts)`, or several at once with `addBulk`. */
interface JobRequest<Data> {
  name: string;
  data: Data;
  opts: AddedJobOptions;
}

/**
 * The job of a signed command. Its id is the command id: a command is queued once, and a repeated
 * Idempotency-Key finds the first request's job.
 */
export function commandJob(command: SignedCommand): JobRequest<SignedCommand> {
  return { name: command.name, data: command, opts: { ...JOBS.command.options, jobId: command.commandId } };
}

/** The job of a signed batch; like a command's, its id is the batch's command id. */
export function batchJob(batch: Signed<BatchCommand>): JobRequest<Signed<BatchCommand>> {
  return { name: BATCH_JOB, data: batch, opts: { ...JOBS.batch.options, jobId: batch.commandId } };
}

/**
 * The job of an event, the same on each of `JOBS.event.queues`. Its id is the event id: an event
 * published twice (a crash between the add and the mark) is one job while that job is kept, and
 * the consumers tolerate later duplicates.
 */
export function eventJob(event: DomainEvent): JobRequest<DomainEvent> {
  return { name: event.name, data: event, opts: { ...JOBS.event.options, jobId: event.eventId } };
}

/** The job of a signed subscription command; its id is the command id. */
export function subscriptionCommandJob(command: Signed<SubscriptionCommand>): JobRequest<Signed<SubscriptionCommand>> {
  return { name: command.name, data: command, opts: { ...JOBS.subscription.options, jobId: command.commandId } };
}

/** What a webhook delivery job carries: names only (the body is read at delivery, the secret never leaves Postgres). */
export interface WebhookDeliveryData {
  eventId: string;
  eventType: string;
  /** The subscription's key. */
  subscriptionId: number;
}

/**
 * The job delivering one event to one subscription. Its id is derived from both (BullMQ custom ids
 * must not be integers nor hold `:`; a UUID and a number joined by `-` are neither), so a burst
 * handled twice (a redelivery, a crash between recording and enqueuing) adds each delivery once
 * while its job is kept; past that the worker finds the recorded 2xx and sends nothing.
 */
export function webhookDeliveryJob(data: WebhookDeliveryData, attempts: number): JobRequest<WebhookDeliveryData> {
  return {
    name: WEBHOOK_DELIVERY_JOB,
    data,
    opts: { ...JOBS.webhookDelivery.options, attempts, jobId: `wh-${data.eventId}-${data.subscriptionId}` },
  };
}

/** Most events one burst job carries: bounds a job's size (about 500 bytes an event) and a consumer's statement. */
export const EVENT_BURST_MAX = 200;

/** Consecutive events of a burst that came from one write (or from none: `origin` null). */
interface OriginRun {
  origin: WriteOrigin | null;
  count: number;
}

export interface EventBurstData {
  events: DomainEvent[];
  /**
   * The origins of the events, in their order: each run covers `count` consecutive events (a write's
   * events are consecutive, so a 1,000-request batch's take one). Absent on jobs published before.
   */
  origins?: OriginRun[];
  /** W3C trace context of the relay's publish, when tracing is on: the event workers' spans follow it. */
  trace?: { traceparent: string; tracestate?: string };
}

function sameOrigin(a: WriteOrigin | null, b: WriteOrigin | null): boolean {
  return (
    a === b || (a?.requestId === b?.requestId && a?.traceparent === b?.traceparent && a?.tracestate === b?.tracestate)
  );
}

/**
 * The job of a burst of events (at most EVENT_BURST_MAX), the same on each of
 * `JOBS.eventBurst.queues`. Its id is derived from the event ids, so the same burst published twice
 * (a crash between the add and the mark) is one job while that job is kept; the consumers are
 * idempotent per event id for the rest (a burst regrouped by the sweep, a redelivery).
 */
export function eventBurstJob(
  events: readonly DomainEvent[],
  /** The origin of each event (its outbox row's), in the same order. */
  origins: readonly (WriteOrigin | null | undefined)[] = [],
  trace?: EventBurstData['trace'],
): JobRequest<EventBurstData> {
  if (events.length === 0 || events.length > EVENT_BURST_MAX) {
    throw new RangeError(`an event burst holds 1–${EVENT_BURST_MAX} events, not ${events.length}`);
  }
  const digest = createHash('sha256');
  const runs: OriginRun[] = [];
  events.forEach((event, i) => {
    digest.update(event.eventId).update('\n');
    const origin = origins[i] ?? null;
    const last = runs.at(-1);
    if (last && sameOrigin(last.origin, origin)) last.count++;
    else runs.push({ origin, count: 1 });
  });
  return {
    name: EVENT_BURST_JOB,
    data: {
      events: [...events],
      // None known (tests, a sweep of rows from before origins): nothing to carry.
      ...(runs.some((run) => run.origin) ? { origins: runs } : {}),
      ...(trace ? { trace } : {}),
    },
    opts: { ...JOBS.eventBurst.options, jobId: `burst-${digest.digest('hex').slice(0, 40)}` },
  };
}

/**
 * The origin of each event of a burst, in order: null where there is none (a job published before
 * origins, a row written by hand) or where what the job carries is not an origin (event jobs are not
 * signed: see isWriteOrigin).
 */
export function burstOrigins(data: EventBurstData): (WriteOrigin | null)[] {
  const total = data.events.length;
  const origins: (WriteOrigin | null)[] = [];
  for (const run of Array.isArray(data.origins) ? data.origins : []) {
    if (origins.length >= total) break;
    const count = Number.isInteger(run?.count) && run.count > 0 ? Math.min(run.count, total - origins.length) : 0;
    const origin = isWriteOrigin(run?.origin) ? run.origin : null;
    for (let i = 0; i < count; i++) origins.push(origin);
  }
  while (origins.length < total) origins.push(null);
  return origins;
}

export interface RebuildViewsData {
  requestedBy?: string;
  /** The request that asked for it (its id and trace context). */
  origin?: WriteOrigin;
}

/** A rebuild request: BullMQ makes the id, every request is a job of its own. */
export function rebuildViewsJob(requestedBy: string, origin?: WriteOrigin): JobRequest<RebuildViewsData> {
  return {
    name: REBUILD_VIEWS_JOB,
    data: { requestedBy, ...(origin ? { origin } : {}) },
    opts: { ...JOBS.rebuildViews.options },
  };
}

/**
 * The retention job scheduler. Its id is the job name, the same in every command worker process
 * that upserts it, so the deployment has one schedule: one job per interval, whichever process
 * takes it.
 */
export function pruneRetentionSchedule(everyMs: number) {
  return {
    schedulerId: PRUNE_RETENTION_JOB,
    repeat: { every: everyMs },
    template: { name: PRUNE_RETENTION_JOB, opts: { ...JOBS.pruneRetention.options } },
  };
}
