import type { Knex } from 'knex';
import { Activity } from '../../domain/entities/read-models';
import { readEntity } from '../query/entity-reader';

/**
 * An activity-log entry exactly as `GET /Activities/<Id>` shows it (the same SQL), for the `data`
 * of a webhook delivery; null when it is gone.
 */
export async function activityEntry(knex: Knex, activityId: number): Promise<Record<string, unknown> | null> {
  const read = await readEntity(knex, Activity, activityId);
  return read ? (JSON.parse(read.json) as Record<string, unknown>) : null;
}
