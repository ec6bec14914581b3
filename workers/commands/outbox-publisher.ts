import { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { markEventsPublished } from '../../db/commands/outbox';
import type { Logger } from '../../infra/logger';
import { queuePrefix, withBullConnection } from '../../infra/redis';
import type { RedisTarget } from '../../infra/config/load-config';
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

export interface OutboxPublisherOptions {
  knex: Knex;
  /** Where Redis is, and QUEUE_PREFIX (each queue's BullMQ prefix follows `queuePrefix`). */
  redis: RedisTarget;
  queuePrefix: string;
  logger: Logger;
  /** See AppConfig.eventPublishWindowMs: 0 publishes right after each completion. */
  publishWindowMs?: number;
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

  constructor(private readonly options: OutboxPublisherOptions) {
    this.publishWindowMs = options.publishWindowMs ?? 0;
    this.queues = JOBS.eventBurst.queues.map((name) => {
      // Producer connections fail fast while Redis is down: the rows stay unpublished for the sweep.
      const queue = withBullConnection(
        options.redis,
        'producer',
        (connection) => new Queue(name, { connection, prefix: queuePrefix(options, name) }),
      );
      queue.on('error', (err) => options.logger.debug({ queue: name, err: err.message }, 'event queue error'));
      return queue;
    });
  }

  /**
   * Adds the events to every event queue, at once: one burst job per EVENT_BURST_MAX events and
   * queue, so a consumer takes a whole burst with one fetch and applies it set-based. Each burst
   * carries its events' origins (their request ids for the consumers' log lines) and, with tracing
   * on, the context of this publish's span, which continues the first write's trace and links the
   * others'.
   */
  async publish(
    events: readonly DomainEvent[],
    origins: readonly (WriteOrigin | null | undefined)[] = [],
  ): Promise<void> {
    for (let i = 0; i < events.length; i += EVENT_BURST_MAX) {
      await this.publishBurst(events.slice(i, i + EVENT_BURST_MAX), origins.slice(i, i + EVENT_BURST_MAX));
    }
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

  /** One round trip per queue, no transaction; the mark follows in a batch. */
  private async publishAndMark(
    events: readonly DomainEvent[],
    origins: readonly (WriteOrigin | undefined)[],
  ): Promise<void> {
    await this.publish(events, origins);
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
