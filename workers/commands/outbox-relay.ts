import { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { pruneCommandLog } from '../../db/commands/command-log';
import { lockUnpublished, markPublished, prunePublished } from '../../db/commands/outbox';
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
const PRUNE_INTERVAL_MS = 10 * 60_000;
/** Published events are kept a day for inspection; the activity log is the lasting record. */
const OUTBOX_RETENTION_MS = 24 * 3600_000;
/** Redeliveries and Idempotency-Key repeats come long before a week is out. */
const COMMAND_LOG_RETENTION_MS = 7 * 24 * 3600_000;

const EVENT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
};

export interface OutboxRelay {
  /** Publishes these events now, in the background. */
  publishSoon(eventIds: readonly string[]): void;
  close(): Promise<void>;
}

export interface OutboxRelayOptions {
  knex: Knex;
  redisUrl: string;
  prefix: string;
  logger: Logger;
  sweepIntervalMs?: number;
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
  let lastPrune = 0;

  const sweepIntervalMs = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;

  async function publishBatch(which: Parameters<typeof lockUnpublished>[2]): Promise<number> {
    return knex.transaction(async (trx) => {
      const rows = await lockUnpublished(trx, BATCH, which);
      if (!rows.length) return 0;
      for (const queue of queues) {
        await queue.addBulk(
          rows.map((row) => ({
            name: row.event.name,
            data: row.event,
            opts: { ...EVENT_JOB_OPTIONS, jobId: row.event.eventId },
          })),
        );
      }
      await markPublished(
        trx,
        rows.map((row) => row.id),
      );
      return rows.length;
    });
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
      const n = await publishBatch({ olderThanMs: sweepIntervalMs });
      total += n;
      if (n < BATCH) return total;
    }
  }

  async function housekeeping(): Promise<void> {
    try {
      const published = await track(sweep());
      if (published) logger.info({ published }, 'outbox sweep published events left unpublished');
      if (!closed && Date.now() - lastPrune > PRUNE_INTERVAL_MS) {
        lastPrune = Date.now();
        await track(prunePublished(knex, OUTBOX_RETENTION_MS));
        await track(pruneCommandLog(knex, COMMAND_LOG_RETENTION_MS));
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'outbox sweep failed; will retry');
    } finally {
      if (!closed) timer = setTimeout(() => void housekeeping(), sweepIntervalMs);
    }
  }
  void housekeeping();

  // Events committed while a publish is in flight wait for it and go out together: under load one
  // relay transaction and one queue round trip carry many commands' events instead of one each.
  let pending: string[] = [];
  let publishing: Promise<void> | null = null;
  function drain(): void {
    if (publishing || pending.length === 0) return;
    const eventIds = pending.splice(0, BATCH);
    publishing = track(publishBatch({ eventIds }))
      .then(
        () => undefined,
        (err: unknown) =>
          logger.warn({ err: (err as Error).message, eventIds }, 'publishing events failed; the sweep will retry'),
      )
      .finally(() => {
        publishing = null;
        drain();
      });
  }

  return {
    publishSoon(eventIds) {
      if (closed) return; // the next sweep, in any process, picks these up
      pending.push(...eventIds);
      drain();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      pending = []; // left unpublished: the sweep of any command worker publishes them
      await publishing;
      await Promise.allSettled([...inFlight]);
      await Promise.allSettled(queues.map((q) => q.close()));
    },
  };
}
