import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { markEventsPublished } from '../../db/commands/outbox';
import type { Logger } from '../../infra/logger';
import { replicasHolding, type RedisClient } from '../../infra/redis';
import { openQueue } from '../../infra/queues';
import type { RedisDurability, RedisTarget } from '../../infra/config/load-config';
import type { DomainEvent } from '../../domain/events/domain-event';
import { EVENT_BURST_MAX, JOBS, eventBurstJob } from '../../domain/queues/job-registry';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { tracing } from '../../infra/tracing/tracing';
import { requestFields, traceContexts } from '../shared/write-origins';

/** Events per publish (one burst job per consumer queue), and marks per statement. */
const BATCH = EVENT_BURST_MAX;
/**
 * Published events are marked in one statement per this interval rather than one per command: a
 * crash before the mark only means the sweep publishes them again, which the queues absorb (the
 * job id is the event id and event jobs are kept an hour) and the consumers tolerate.
 */
const MARK_DELAY_MS = 100;
/**
 * After Redis replicas failed to acknowledge a burst, the publisher's own bursts skip the wait for
 * this long (each would stall the publishing loop for REDIS_WAIT_TIMEOUT_MS): they are published
 * at once but left unmarked, and the sweep, which always waits, marks them once a replica holds them.
 */
const UNCONFIRMED_BACKOFF_MS = 5000;

export interface OutboxPublisherOptions {
  knex: Knex;
  /** Where Redis is, and QUEUE_PREFIX (each queue's BullMQ prefix follows `queuePrefix`). */
  redis: RedisTarget;
  queuePrefix: string;
  logger: Logger;
  /** See AppConfig.eventPublishWindowMs: 0 publishes right after each completion. */
  publishWindowMs?: number;
  /** Replicas that must hold a burst before its events are marked published (REDIS_WAIT_*). */
  durability?: RedisDurability;
}

/**
 * The connection a queue adds its jobs on (BullMQ wraps the ioredis client in a proxy that still
 * answers ioredis's own methods): WAIT must be sent on it to cover those adds.
 */
async function queueClient(queue: Queue): Promise<RedisClient> {
  return (await queue.getBackend().client) as unknown as RedisClient;
}

/** Redis replicas did not acknowledge a burst in time: its events must stay unpublished in the outbox. */
class UnconfirmedPublishError extends Error {
  constructor(durability: RedisDurability) {
    super(
      `events published but not acknowledged by ${durability.replicas} Redis replica(s) within ${durability.timeoutMs} ms (REDIS_WAIT_*)`,
    );
    this.name = 'UnconfirmedPublishError';
  }
}

/**
 * Publishes the events of this process's commits to the event queues (`views`, `notifications`)
 * after commit, from memory, and marks them published (DESIGN §1). Events committed within the
 * publish window, or while a publish is in flight, go out together: under load one queue round trip
 * carries many commands' events instead of one each. What it fails to publish, or what a crash
 * loses, stays unpublished in the outbox for the OutboxSweeper.
 */
export class OutboxPublisher {
  private readonly queues: Queue[];
  private readonly publishWindowMs: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private pending: DomainEvent[] = [];
  /** The origin of each pending event (its write's), in the same order. */
  private pendingOrigins: (WriteOrigin | undefined)[] = [];
  private publishing: Promise<void> | null = null;
  private drainScheduled = false;
  private readonly toMark: string[] = [];
  private markTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private unconfirmedUntil = 0;

  constructor(private readonly options: OutboxPublisherOptions) {
    this.publishWindowMs = options.publishWindowMs ?? 0;
    // Producer connections fail fast while Redis is down: the rows stay unpublished for the sweep.
    this.queues = JOBS.eventBurst.queues.map((name) =>
      openQueue(options, name, { own: 'producer' }, (err) =>
        options.logger.debug({ queue: name, err: err.message }, 'event queue error'),
      ),
    );
  }

  /**
   * Adds the events to every event queue, at once: one burst job per EVENT_BURST_MAX events and
   * queue, so a consumer takes a whole burst with one fetch and applies it set-based. Each burst
   * carries its events' origins (their request ids for the consumers' log lines) and, with tracing
   * on, the context of this publish's span, which continues the first write's trace and links the
   * others'. Throws when the Redis replicas REDIS_WAIT_REPLICAS asks for did not acknowledge them:
   * the caller (the sweep) must then leave them unpublished.
   */
  async publish(
    events: readonly DomainEvent[],
    origins: readonly (WriteOrigin | null | undefined)[] = [],
  ): Promise<void> {
    for (let i = 0; i < events.length; i += EVENT_BURST_MAX) {
      await this.publishBurst(events.slice(i, i + EVENT_BURST_MAX), origins.slice(i, i + EVENT_BURST_MAX));
      if (!(await this.confirmed(true))) throw new UnconfirmedPublishError(this.options.durability!);
    }
  }

  /**
   * Whether the replicas REDIS_WAIT_REPLICAS asks for hold everything published so far (one WAIT
   * per queue connection, at once). A publish that may skip the wait does so for a while after one
   * went unacknowledged, and counts as unconfirmed.
   */
  private async confirmed(mustWait: boolean): Promise<boolean> {
    const { durability, logger } = this.options;
    if (!durability || durability.replicas === 0) return true;
    if (!mustWait && Date.now() < this.unconfirmedUntil) return false;
    const holding = await Promise.all(
      this.queues.map(async (queue) => (await replicasHolding(await queueClient(queue), durability)) ?? 0),
    );
    if (Math.min(...holding) >= durability.replicas) return true;
    if (Date.now() >= this.unconfirmedUntil) {
      logger.warn(
        { replicas: holding, wanted: durability.replicas, timeoutMs: durability.timeoutMs },
        'Redis replicas did not acknowledge published events; they stay unpublished in the outbox until the sweep sees them acknowledged',
      );
    }
    this.unconfirmedUntil = Date.now() + UNCONFIRMED_BACKOFF_MS;
    return false;
  }

  private publishBurst(events: readonly DomainEvent[], origins: readonly (WriteOrigin | null | undefined)[]) {
    const [parent, ...links] = traceContexts(origins);
    const fields = requestFields(origins);
    return tracing().inSpan(
      'publish event-burst',
      {
        kind: 'producer',
        parent,
        links,
        attributes: { 'messaging.system': 'bullmq', 'messaging.batch.message_count': events.length },
        requestId: fields.requestId,
      },
      async () => {
        const job = eventBurstJob(events, origins, tracing().activeContext());
        await Promise.all(this.queues.map((queue) => queue.add(job.name, job.data, job.opts)));
        this.options.logger.debug({ ...fields, events: events.length, jobId: job.opts.jobId }, 'events published');
      },
    );
  }

  /** Publishes these just-committed events soon, in the background, and marks them published. */
  publishSoon(events: readonly DomainEvent[], origin?: WriteOrigin): void {
    if (this.closed) return; // the next sweep, in any process, picks these up
    this.pending.push(...events);
    for (let i = 0; i < events.length; i++) this.pendingOrigins.push(origin);
    // Never in the same turn of the event loop: the command's completion goes to Redis first, so the
    // caller is answered before this process and Redis publish its events.
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    const go = () => {
      this.drainScheduled = false;
      this.drain();
    };
    if (this.publishWindowMs > 0) setTimeout(go, this.publishWindowMs);
    else setImmediate(go);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending = []; // left unpublished: the sweep of any command worker publishes them
    this.pendingOrigins = [];
    await this.publishing;
    this.flushMarks();
    await Promise.allSettled([...this.inFlight]);
    await Promise.allSettled(this.queues.map((q) => q.close()));
  }

  /** One publish at a time: events committed meanwhile wait for it and go out together next. */
  private drain(): void {
    if (this.publishing || this.pending.length === 0) return;
    const events = this.pending.splice(0, BATCH);
    const origins = this.pendingOrigins.splice(0, BATCH);
    this.publishing = this.track(this.publishAndMark(events, origins))
      .then(
        () => undefined,
        (err: unknown) =>
          this.options.logger.warn(
            { ...requestFields(origins), err: (err as Error).message, eventIds: events.map((event) => event.eventId) },
            'publishing events failed; the sweep will retry',
          ),
      )
      .finally(() => {
        this.publishing = null;
        this.drain();
      });
  }

  /**
   * One round trip per queue, no transaction; the mark follows in a batch. Events the Redis replicas
   * have not acknowledged are left unmarked: the sweep publishes them again and marks them once
   * acknowledged, so a failover to a replica that never received them cannot lose them.
   */
  private async publishAndMark(
    events: readonly DomainEvent[],
    origins: readonly (WriteOrigin | undefined)[],
  ): Promise<void> {
    await this.publishBurst(events, origins);
    if (!(await this.confirmed(false))) return;
    this.toMark.push(...events.map((event) => event.eventId));
    if (this.toMark.length >= BATCH) this.flushMarks();
    else this.markTimer ??= setTimeout(() => this.flushMarks(), MARK_DELAY_MS);
  }

  private flushMarks(): void {
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const eventIds = this.toMark.splice(0);
    if (!eventIds.length) return;
    this.track(markEventsPublished(this.options.knex, eventIds)).catch((err: unknown) =>
      this.options.logger.warn(
        { err: (err as Error).message },
        'marking events published failed; the sweep will republish them',
      ),
    );
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}
