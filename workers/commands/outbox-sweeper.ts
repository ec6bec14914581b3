import type { Knex } from 'knex';
import { lockUnpublished, markPublished } from '../../db/commands/outbox';
import type { Logger } from '../../infra/logger';
import { isPublishableEvent, type DomainEvent } from '../../domain/events/domain-event';
import { EVENT_BURST_MAX } from '../../domain/queues/job-registry';
import type { WriteOrigin } from '../../domain/commands/write-origin';

/** Rows per sweep transaction: one burst job per consumer queue. */
const BATCH = EVENT_BURST_MAX;
const SWEEP_INTERVAL_MS = 1000;

export interface OutboxSweeperOptions {
  knex: Knex;
  logger: Logger;
  /** Adds events to the event queues with their writes' origins (OutboxPublisher.publish). */
  publish(events: readonly DomainEvent[], origins: readonly (WriteOrigin | null)[]): Promise<void>;
  /** How often the sweep runs; it takes only rows older than this. */
  intervalMs?: number;
}

/**
 * Publishes what a crash (or a failed publish) left unpublished in the outbox: every interval, from
 * the moment it is made until closed, it locks the rows left unpublished longer than the interval
 * (fresh rows are their committing process's to publish), publishes them and marks them published
 * in the same transaction. Locked rows are skipped, so two processes' sweeps never publish the same
 * rows at once.
 */
export class OutboxSweeper {
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: OutboxSweeperOptions) {
    this.intervalMs = options.intervalMs ?? SWEEP_INTERVAL_MS;
    this.running = this.run();
  }

  /** Publishes every row left behind, batch after batch; returns how many rows it took. */
  private async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.sweepBatch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      const published = await this.sweep();
      if (published) this.options.logger.info({ published }, 'outbox sweep published events left unpublished');
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'outbox sweep failed; will retry');
    } finally {
      if (!this.closed) this.timer = setTimeout(() => (this.running = this.run()), this.intervalMs);
    }
  }

  private async sweepBatch(): Promise<number> {
    const { knex, logger } = this.options;
    return knex.transaction(async (trx) => {
      const rows = await lockUnpublished(trx, BATCH, this.intervalMs);
      if (!rows.length) return 0;
      // A row that is not an event (written by hand) must not block every row behind it.
      const malformed = rows.filter((row) => !isPublishableEvent(row.event));
      if (malformed.length) {
        logger.error({ outboxIds: malformed.map((row) => row.id) }, 'outbox rows that are not events: set aside');
      }
      const publishable = rows.filter((row) => isPublishableEvent(row.event));
      await this.options.publish(
        publishable.map((row) => row.event),
        publishable.map((row) => row.origin),
      );
      await markPublished(
        trx,
        rows.map((row) => row.id),
      );
      return rows.length;
    });
  }
}
