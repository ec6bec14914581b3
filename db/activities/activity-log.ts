import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * Adds the activity-log entry of one event (GET /Activities); false when it was there already.
 * The event id is unique in the table, so a redelivered event (at-least-once queues) adds nothing.
 */
export async function recordActivity(knex: Knex, event: DomainEvent): Promise<boolean> {
  const inserted = await knex('activities')
    .insert({
      event_id: event.eventId,
      event_type: event.name,
      entity_type: event.entityType,
      entity_id: event.entityId,
      subject: event.subject,
      occurred_at: event.occurredAt,
      changed_fields: JSON.stringify(event.changedFields ?? []),
      command_id: event.commandId,
    })
    .onConflict('event_id')
    .ignore()
    .returning('id');
  return inserted.length > 0;
}
