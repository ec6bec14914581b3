import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { EventBurstData } from '../../domain/queues/job-registry';
import { affectedDocuments, reindexDocuments } from '../../db/search/search-indexer';
import type { Logger } from '../../infra/logger';
import { applyBurst } from '../shared/burst-applier';

/**
 * Rebuilds the search documents a burst of events touches: each entity's own and, fanned out, those
 * of every entity that shows it (a Company rename re-indexes its Schemes), set-based and in one
 * transaction per burst. Documents come from the rows as they are now, so a redelivered or late
 * burst only rebuilds the current documents again.
 */
async function reindexEvents(knex: Knex, events: readonly DomainEvent[]): Promise<{ documents: number }> {
  return { documents: await reindexDocuments(knex, await affectedDocuments(knex, events)) };
}

export function reindexBurstHandler(knex: Knex) {
  return async (job: Job<EventBurstData>, logger: Logger): Promise<{ documents: number }> => ({
    documents: await applyBurst(
      job.data.events,
      async (events) => (await reindexEvents(knex, events)).documents,
      logger,
    ),
  });
}

/** The same for a job carrying one event (published before bursts, or redelivered by hand). */
export function reindexEventHandler(knex: Knex) {
  return (job: Job<DomainEvent>) => reindexEvents(knex, [job.data]);
}
