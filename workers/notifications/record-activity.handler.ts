import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import { recordActivities } from '../../db/activities/activity-log';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { EventBurstData } from '../../domain/queues/job-registry';
import type { Logger } from '../../infra/logger';
import { applyBurst } from '../shared/burst-applier';

/**
 * What runs once a burst's entries are recorded (the webhook deliveries, DESIGN §16): given every
 * event of the burst, recorded now or by an earlier delivery of it, so a crash in between loses nothing.
 */
export type AfterRecorded = (events: readonly DomainEvent[]) => Promise<unknown>;

/**
 * The activity log's entries of some events: each entity's earlier unrecorded events first, and for
 * an event refused on its own, the event alone (db/activities/activity-log.ts, burst-applier.ts).
 */
function recordWithFallback(knex: Knex, events: readonly DomainEvent[], logger: Logger): Promise<number> {
  return applyBurst(
    events,
    (some) => recordActivities(knex, some),
    logger,
    (one) => recordActivities(knex, one, { earlierFirst: false }),
  );
}

/** Activity-log entries of a burst of events, one statement; redelivered events add nothing. */
export function recordBurstHandler(knex: Knex, afterRecorded?: AfterRecorded) {
  return async (job: Job<EventBurstData>, logger: Logger): Promise<{ recorded: number }> => {
    const recorded = await recordWithFallback(knex, job.data.events, logger);
    await afterRecorded?.(job.data.events);
    return { recorded };
  };
}

/** The same for a job carrying one event (published before bursts, or redelivered by hand). */
export function recordEventHandler(knex: Knex, logger: Logger, afterRecorded?: AfterRecorded) {
  return async (job: Job<DomainEvent>): Promise<{ recorded: number }> => {
    const recorded = await recordWithFallback(knex, [job.data], logger);
    await afterRecorded?.([job.data]);
    return { recorded };
  };
}
