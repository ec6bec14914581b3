import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../domain/config/load-config';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';
import { QUEUE, REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';
import { rebuildViewsHandler } from './rebuild-views.handler';
import { reindexSearchHandler } from './reindex-search.handler';

/** The view-rebuild worker: keeps the search read model current, event by event or all at once. */
export function startViewsWorker(config: AppConfig): Promise<RunningWorker> {
  return startQueueWorker(config, QUEUE.views, [...ALL_EVENT_NAMES, REBUILD_VIEWS_JOB], ({ knex }) => {
    const reindex = reindexSearchHandler(knex);
    return {
      ...Object.fromEntries(ALL_EVENT_NAMES.map((name) => [name, reindex])),
      [REBUILD_VIEWS_JOB]: rebuildViewsHandler(knex),
    };
  });
}
