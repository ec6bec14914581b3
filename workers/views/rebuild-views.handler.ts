import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import { rebuildAllDocuments } from '../../db/search/search-indexer';
import type { RebuildViewsData } from '../../domain/queues/job-registry';

/** The request, and how far the rebuild got (saved in the job after each batch). */
interface RebuildState extends RebuildViewsData {
  resume?: { entityIndex: number; lastKey: number };
}

/**
 * Full rebuild of the read models in key-ordered batches (`POST /Jobs/RebuildViews`). Progress is
 * saved in the job after each batch, so a worker killed mid-rebuild resumes where it stopped when
 * the stalled job runs again; rebuilt documents are idempotent, so the overlap is harmless.
 */
export function rebuildViewsHandler(knex: Knex) {
  return async (job: Job<RebuildState>): Promise<{ documents: number }> => {
    const resume = job.data?.resume;
    return rebuildAllDocuments(
      knex,
      async ({ entity, done, total, lastKey, entityIndex }) => {
        await job.updateData({ ...job.data, resume: { entityIndex, lastKey } });
        await job.updateProgress({ entity, done, total });
      },
      resume,
    );
  };
}
