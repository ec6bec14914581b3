import { ENTITIES } from '../entities';

/**
 * Domain events: one family per entity (`SchemeCreated`, `SchemeUpdated`, `SchemeDeleted`, …),
 * written to the outbox in the command's transaction and relayed to the `views` and
 * `notifications` queues (job name = event name, job id = event id).
 */

export type EventVerb = 'Created' | 'Updated' | 'Deleted';

export interface DomainEvent {
  eventId: string;
  /** `<Entity><Verb>`, e.g. `SchemeUpdated`. */
  name: string;
  entityType: string;
  /** Encoded Id of the entity (spec 2.3). */
  entityId: string;
  /** Internal key, for read-model handlers; never shown to clients. */
  dbId: number;
  /** API member names whose values changed (all written members on create). */
  changedFields: string[];
  subject: string;
  commandId: string;
  occurredAt: string;
  /** Row version after the change (0 for deletes): lets handlers ignore stale deliveries. */
  version: number;
  /**
   * Internal keys of the row's single relations (`{ Scheme: 12, Company: 3 }`): after the change,
   * or as they were before a delete. Lets read models find the parents a change shows up in even
   * when the row itself is gone.
   */
  references: Record<string, number | null>;
}

/** Whether an outbox row holds something the relay can publish (it names itself and has an id). */
export function isPublishableEvent(value: unknown): value is DomainEvent {
  const event = value as Partial<DomainEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.eventId === 'string' &&
    typeof event.name === 'string' &&
    event.name.length > 0
  );
}

export const EVENT_VERBS: readonly EventVerb[] = ['Created', 'Updated', 'Deleted'];

export function eventName(entityType: string, verb: EventVerb): string {
  return `${entityType}${verb}`;
}

/** Every event name the command workers can emit. */
export const ALL_EVENT_NAMES: readonly string[] = ENTITIES.flatMap((e) => EVENT_VERBS.map((v) => eventName(e.name, v)));
