import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../domain/config/load-config';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { rebuildViewsHandler } from './rebuild-views.handler';
import { reindexSearchHandler } from './reindex-search.handler';

/** The view-rebuild worker: keeps the search read model current, event by event or all at once. */
export function startViewsWorker(config: AppConfig): Promise<RunningWorker> {
  return startQueueWorker(config, QUEUE.views, ({ knex }) => ({
    event: reindexSearchHandler(knex),
    rebuildViews: rebuildViewsHandler(knex),
  }));
}
