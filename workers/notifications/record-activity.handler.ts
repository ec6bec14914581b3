import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import { recordActivity } from '../../db/activities/activity-log';
import type { DomainEvent } from '../../domain/events/domain-event';

/** Writes one activity-log entry per event; a redelivered event adds nothing. */
export function recordActivityHandler(knex: Knex) {
  return async (job: Job<DomainEvent>): Promise<{ recorded: boolean }> => ({
    recorded: await recordActivity(knex, job.data),
  });
}
