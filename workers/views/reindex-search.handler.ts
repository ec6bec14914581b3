import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';
import { affectedDocuments, reindex } from '../../db/search/search-indexer';

/**
 * Rebuilds the search documents an event touches: the entity's own and, fanned out, those of every
 * entity that shows it (a Company rename re-indexes its Schemes).
 */
export function reindexSearchHandler(knex: Knex) {
  return async (job: Job<DomainEvent>): Promise<{ documents: number }> => {
    const affected = await affectedDocuments(knex, job.data);
    let documents = 0;
    for (const [entity, keys] of affected) {
      for (let i = 0; i < keys.length; i += 1000) {
        await reindex(knex, entity, keys.slice(i, i + 1000));
      }
      documents += keys.length;
    }
    return { documents };
  };
}
