import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * The transactional outbox (DESIGN §1): events are inserted with the command's writes and relayed
 * to the event queues after commit. A row is locked while it is being published (`skip locked`),
 * so the relay right after a commit and the periodic sweep never publish the same row at once.
 */

export interface OutboxRow {
  id: number;
  event: DomainEvent;
}

export async function addToOutbox(trx: Knex.Transaction, events: readonly DomainEvent[]): Promise<void> {
  if (!events.length) return;
  await trx('outbox').insert(events.map((event) => ({ event_id: event.eventId, event: JSON.stringify(event) })));
}

/**
 * Unpublished rows, oldest first, locked for this transaction: those of `eventIds`, or (for the
 * sweep) every row written at least `olderThanMs` ago.
 */
export async function lockUnpublished(
  trx: Knex.Transaction,
  limit: number,
  which: { eventIds: readonly string[] } | { olderThanMs: number },
): Promise<OutboxRow[]> {
  const query = trx('outbox').select('id', 'event').whereNull('published_at').orderBy('id').limit(limit);
  if ('eventIds' in which) query.whereIn('event_id', which.eventIds);
  else query.where('created_at', '<', new Date(Date.now() - which.olderThanMs));
  return (await query.forUpdate().skipLocked()) as OutboxRow[];
}

export async function markPublished(trx: Knex.Transaction, ids: readonly number[]): Promise<void> {
  if (ids.length) await trx('outbox').whereIn('id', ids).update({ published_at: trx.fn.now() });
}

/** Published rows past the retention window; the activity log keeps the lasting record. */
export async function prunePublished(knex: Knex, olderThanMs: number, batch = 5000): Promise<number> {
  return knex('outbox')
    .whereIn(
      'id',
      knex('outbox')
        .select('id')
        .whereNotNull('published_at')
        .where('published_at', '<', new Date(Date.now() - olderThanMs))
        .limit(batch),
    )
    .delete();
}
