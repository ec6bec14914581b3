import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * Adds the activity-log entries of a burst of events (GET /Activities) in one statement, in the
 * burst's order; returns how many were new. The event id is unique in the table, so a redelivered
 * event or burst (at-least-once queues, a burst regrouped by the sweep) adds nothing.
 */
export async function recordActivities(knex: Knex, events: readonly DomainEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const inserted = await knex('activities')
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
  return inserted.length;
}
