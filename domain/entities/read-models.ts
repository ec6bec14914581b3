import type { EntityDefinition } from './entity-definition';

/**
 * Read models: routes that are read with OData like entities but written only by workers (never
 * through the write routes, never emitting events).
 */

/** One entry per domain event, written by the notification worker (DESIGN §7). */
export const Activity: EntityDefinition = {
  name: 'Activity',
  route: 'Activities',
  description: 'The activity log: one entry per change, written by the service (read-only).',
  table: 'activities',
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    EventType: { kind: 'string', column: 'event_type', required: true },
    EntityType: { kind: 'string', column: 'entity_type', required: true },
    EntityId: { kind: 'string', column: 'entity_id', required: true },
    Subject: { kind: 'string', column: 'subject', required: true },
    OccurredAt: { kind: 'datetime', column: 'occurred_at', required: true },
    ChangedFields: { kind: 'stringList', column: 'changed_fields', required: true },
  },
  relations: {},
  collections: {},
  searchFields: {},
};

export const READ_MODELS: readonly EntityDefinition[] = [Activity];
