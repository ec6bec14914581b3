import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * Writes one activity-log entry per event. The event id is unique in the table, so a redelivered
 * event (at-least-once queues) adds nothing.
 */
export function recordActivityHandler(knex: Knex) {
  return async (job: Job<DomainEvent>): Promise<{ recorded: boolean }> => {
    const event = job.data;
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
    return { recorded: inserted.length > 0 };
  };
}
