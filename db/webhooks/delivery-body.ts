import type { Knex } from 'knex';
import { Activity } from '../../domain/entities/read-models';
import { readEntity } from '../query/entity-reader';

/**
 * The activity-log entry of an event exactly as `GET /Activities/<Id>` shows it (the same SQL),
 * for the `data` of a webhook delivery; null when the event has no entry (it was refused).
 */
export async function activityOfEvent(knex: Knex, eventId: string): Promise<Record<string, unknown> | null> {
  const row = (await knex('activities').select('id').where('event_id', eventId).first()) as { id: number } | undefined;
  if (!row) return null;
  const read = await readEntity(knex, Activity, row.id);
  return read ? (JSON.parse(read.json) as Record<string, unknown>) : null;
}
