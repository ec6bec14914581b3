import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * The channel every activity-log insert NOTIFYs, with the largest id it added as the payload
 * (GET /Changes, DESIGN §16). NOTIFY is per database and delivered at commit, so a listener hears
 * of a row only once it is visible.
 */
export const ACTIVITY_CHANNEL = 'emapi_activities';

/**
 * The advisory lock (two-key form: this space, key 0) every writer of the activity log takes in its
 * transaction before it inserts. Serial ids are drawn when a row is inserted, not when it commits:
 * two notification workers inserting at once could commit id 11 before id 10, and a change feed
 * that had moved past 11 would never see 10. Under the lock, ids are drawn and committed in one
 * order, so "every activity with an id above X" is a complete answer once X has been seen. The lock
 * is held for one short statement per burst (its commit included): NOTIFY already serialises the
 * commits of notifying transactions (Postgres takes one lock on its notification queue at
 * pre-commit), so what it adds is the insert itself, a few ms per burst (see docs/changes.md).
 * The space is apart from db/search's (0x5ea4c4).
 */
export const ACTIVITY_LOCK_SPACE = 0xac7104;

/**
 * Adds the activity-log entries of a burst of events (GET /Activities) in one statement, in the
 * burst's order; returns how many were new. The event id is unique in the table, so a redelivered
 * event or burst (at-least-once queues, a burst regrouped by the sweep) adds nothing. The insert
 * runs under ACTIVITY_LOCK_SPACE's lock and notifies ACTIVITY_CHANNEL in the same transaction.
 */
export async function recordActivities(knex: Knex, events: readonly DomainEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  return knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?, 0)', [ACTIVITY_LOCK_SPACE]);
    const inserted: { id: number }[] = await trx('activities')
      .insert(
        events.map((event) => ({
          event_id: event.eventId,
          event_type: event.name,
          entity_type: event.entityType,
          entity_id: event.entityId,
          subject: event.subject,
          occurred_at: event.occurredAt,
          changed_fields: JSON.stringify(event.changedFields ?? []),
          command_id: event.commandId,
        })),
      )
      .onConflict('event_id')
      .ignore()
      .returning('id');
    if (inserted.length) {
      const last = Math.max(...inserted.map((row) => row.id));
      await trx.raw('select pg_notify(?, ?)', [ACTIVITY_CHANNEL, String(last)]);
    }
    return inserted.length;
  });
}
