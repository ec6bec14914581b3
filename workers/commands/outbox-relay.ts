import { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { lockUnpublished, markEventsPublished, markPublished } from '../../db/commands/outbox';
import { isPublishableEvent, type DomainEvent } from '../../domain/events/domain-event';
import type { Logger } from '../../db/infra/logger';
import { bullConnection } from '../../db/infra/redis';
import { QUEUE } from '../../domain/queues/queue-contracts';

/**
 * Publishes outbox rows to the `views` and `notifications` queues after their command committed,
 * then marks them published (DESIGN §1). Job name = event name, job id = event id, so a row
 * published twice (a crash between the queue add and the mark) is one job while that job exists;
 * consumers tolerate later duplicates. A periodic sweep publishes whatever a crash left behind.
 */

const BATCH = 200;
const SWEEP_INTERVAL_MS = 1000;
/**
 * Published events are marked in one statement per this interval rather than one per command: a
 * crash before the mark only means the sweep publishes them again, which the queues absorb (the
 * job id is the event id and event jobs are kept an hour) and the consumers tolerate.
 */
const MARK_DELAY_MS = 100;

const EVENT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
};

export interface OutboxRelay {
  /** Publishes these just-committed events now, in the background. */
  publishSoon(events: readonly DomainEvent[]): void;
  close(): Promise<void>;
}

export interface OutboxRelayOptions {
  knex: Knex;
  redisUrl: string;
  prefix: string;
  logger: Logger;
  sweepIntervalMs?: number;
  /** See AppConfig.eventPublishWindowMs. */
  publishWindowMs?: number;
}

export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { knex, logger } = options;
  const queues = [QUEUE.views, QUEUE.notifications].map((name) => {
    // Producer connections fail fast while Redis is down: the rows stay unpublished for the sweep.
    const queue = new Queue(name, { connection: bullConnection(options.redisUrl, 'producer'), prefix: options.prefix });
    queue.on('error', (err) => logger.debug({ queue: name, err: err.message }, 'outbox relay queue error'));
    return queue;
  });
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const sweepIntervalMs = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
  const publishWindowMs = options.publishWindowMs ?? 0;

  /** Adds the events to both event queues, at once. */
  async function publish(events: readonly DomainEvent[]): Promise<void> {
    const jobs = events.map((event) => ({
      name: event.name,
      data: event,
      opts: { ...EVENT_JOB_OPTIONS, jobId: event.eventId },
    }));
    await Promise.all(queues.map((queue) => queue.addBulk(jobs)));
  }

  /** The sweep: rows left unpublished for a while, locked while they are published. */
  async function publishLeftBehind(olderThanMs: number): Promise<number> {
    return knex.transaction(async (trx) => {
      const rows = await lockUnpublished(trx, BATCH, olderThanMs);
      if (!rows.length) return 0;
      // A row that is not an event (written by hand) must not block every row behind it.
      const malformed = rows.filter((row) => !isPublishableEvent(row.event));
      if (malformed.length) {
        logger.error({ outboxIds: malformed.map((row) => row.id) }, 'outbox rows that are not events: set aside');
      }
      await publish(rows.filter((row) => isPublishableEvent(row.event)).map((row) => row.event));
      await markPublished(
        trx,
        rows.map((row) => row.id),
      );
      return rows.length;
    });
  }

  const toMark: string[] = [];
  let markTimer: NodeJS.Timeout | undefined;
  function flushMarks(): void {
    clearTimeout(markTimer);
    markTimer = undefined;
    const eventIds = toMark.splice(0);
    if (!eventIds.length) return;
    track(markEventsPublished(knex, eventIds)).catch((err: unknown) =>
      logger.warn({ err: (err as Error).message }, 'marking events published failed; the sweep will republish them'),
    );
  }

  /** Just-committed events, from memory: one round trip per queue, no transaction; marked later. */
  async function publishCommitted(events: readonly DomainEvent[]): Promise<void> {
    await publish(events);
    toMark.push(...events.map((event) => event.eventId));
    if (toMark.length >= BATCH) flushMarks();
    else markTimer ??= setTimeout(flushMarks, MARK_DELAY_MS);
  }

  function track<T>(work: Promise<T>): Promise<T> {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  async function sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      // Fresh rows are their committing process's to publish; the sweep takes what was left behind.
      const n = await publishLeftBehind(sweepIntervalMs);
      total += n;
      if (n < BATCH) return total;
    }
  }

  async function housekeeping(): Promise<void> {
    try {
      const published = await track(sweep());
      if (published) logger.info({ published }, 'outbox sweep published events left unpublished');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'outbox sweep failed; will retry');
    } finally {
      if (!closed) timer = setTimeout(() => void housekeeping(), sweepIntervalMs);
    }
  }
  void housekeeping();

  // Events committed while a publish is in flight wait for it and go out together: under load one
  // relay transaction and one queue round trip carry many commands' events instead of one each.
  let pending: DomainEvent[] = [];
  let publishing: Promise<void> | null = null;
  let drainScheduled = false;
  function drain(): void {
    if (publishing || pending.length === 0) return;
    const events = pending.splice(0, BATCH);
    publishing = track(publishCommitted(events))
      .then(
        () => undefined,
        (err: unknown) =>
          logger.warn(
            { err: (err as Error).message, eventIds: events.map((event) => event.eventId) },
            'publishing events failed; the sweep will retry',
          ),
      )
      .finally(() => {
        publishing = null;
        drain();
      });
  }

  return {
    publishSoon(events) {
      if (closed) return; // the next sweep, in any process, picks these up
      pending.push(...events);
      // Never in the same turn of the event loop: the command's completion goes to Redis first,
      // so the caller is answered before this process and Redis publish its events.
      if (drainScheduled) return;
      drainScheduled = true;
      const go = () => {
        drainScheduled = false;
        drain();
      };
      if (publishWindowMs > 0) setTimeout(go, publishWindowMs);
      else setImmediate(go);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      pending = []; // left unpublished: the sweep of any command worker publishes them
      await publishing;
      flushMarks();
      await Promise.allSettled([...inFlight]);
      await Promise.allSettled(queues.map((q) => q.close()));
    },
  };
}
