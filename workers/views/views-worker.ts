import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../infra/config/load-config';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { rebuildViewsHandler } from './rebuild-views.handler';
import { reindexBurstHandler, reindexEventHandler } from './reindex-search.handler';

/** The view-rebuild worker: keeps the search read model current, burst by burst or all at once. */
export function startViewsWorker(config: AppConfig): Promise<RunningWorker> {
  return startQueueWorker(config, QUEUE.views, ({ knex, logger }) => ({
    eventBurst: reindexBurstHandler(knex, logger),
    event: reindexEventHandler(knex),
    rebuildViews: rebuildViewsHandler(knex),
  }));
}
