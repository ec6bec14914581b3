import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import { recordActivities } from '../../db/activities/activity-log';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { EventBurstData } from '../../domain/queues/job-registry';
import type { Logger } from '../../infra/logger';
import { applyBurst } from '../shared/burst-applier';

/** Activity-log entries of a burst of events, one statement; redelivered events add nothing. */
export function recordBurstHandler(knex: Knex) {
  return async (job: Job<EventBurstData>, logger: Logger): Promise<{ recorded: number }> => ({
    recorded: await applyBurst(job.data.events, (events) => recordActivities(knex, events), logger),
  });
}

/** The same for a job carrying one event (published before bursts, or redelivered by hand). */
export function recordEventHandler(knex: Knex) {
  return async (job: Job<DomainEvent>): Promise<{ recorded: number }> => ({
    recorded: await recordActivities(knex, [job.data]),
  });
}
