import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import type { RetainedTable } from './retention';

/**
 * The transactional outbox (DESIGN §1): events are inserted with the command's writes
 * (command-log.ts `recordCommand`) and relayed to the event queues after commit: at once, from the
 * committing process's memory, or by the periodic sweep, which locks the rows it publishes (`skip
 * locked`) so two sweeps never publish the same rows at once. The sweep only takes rows older than
 * its interval, so it rarely meets a fresh commit still being relayed; when it does, the event is
 * published twice, which the queues (job id = event id) and the idempotent consumers absorb.
 */

export interface OutboxRow {
  id: number;
  event: DomainEvent;
  /** The origin of the write that committed it (null for rows from before origins, or by hand). */
  origin: WriteOrigin | null;
}

/** Rows still unpublished `olderThanMs` after they were written, oldest first, locked for this transaction. */
export async function lockUnpublished(trx: Knex.Transaction, limit: number, olderThanMs: number): Promise<OutboxRow[]> {
  return (await trx('outbox')
    .select('id', 'event', 'origin')
    .whereNull('published_at')
    .where('created_at', '<', new Date(Date.now() - olderThanMs))
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()) as OutboxRow[];
}

export async function markPublished(trx: Knex.Transaction, ids: readonly number[]): Promise<void> {
  if (ids.length) await trx('outbox').whereIn('id', ids).update({ published_at: trx.fn.now() });
}

/** Marks events published by id (one statement, no lock: publishing twice is harmless). */
export async function markEventsPublished(knex: Knex, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length) {
    await knex.raw('update outbox set published_at = now() where event_id = any(?::uuid[]) and published_at is null', [
      eventIds as string[],
    ]);
  }
}

/** Rows age out once published (unpublished ones have no time there and stay); the activity log keeps the lasting record. */
export const OUTBOX_RETENTION: RetainedTable = { table: 'outbox', key: 'id', timeColumn: 'published_at' };

/** Events written but not yet relayed to the event queues (the partial index `outbox_unpublished`). */
export async function countUnpublished(knex: Knex): Promise<number> {
  const row = (await knex('outbox').whereNull('published_at').count({ n: '*' }).first()) as { n: string | number };
  return Number(row.n);
}
