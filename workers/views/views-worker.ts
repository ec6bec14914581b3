import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../infra/config/load-config';
import type { Logger } from '../../infra/logger';
import type { Registry } from '../../infra/metrics/registry';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { observingEventLag } from '../shared/event-lag';
import { inBurstContext, inRequestContext } from '../shared/job-context';
import { rebuildViewsHandler } from './rebuild-views.handler';
import { reindexBurstHandler, reindexEventHandler } from './reindex-search.handler';

/** The view-rebuild worker: keeps the search read model current, burst by burst or all at once. */
export function startViewsWorker(config: AppConfig, _logger?: Logger, metrics?: Registry): Promise<RunningWorker> {
  return startQueueWorker(
    config,
    QUEUE.views,
    ({ knex, logger, metrics }) => ({
      ...observingEventLag(QUEUE.views, metrics, {
        eventBurst: inBurstContext(QUEUE.views, logger, reindexBurstHandler(knex)),
        event: reindexEventHandler(knex),
      }),
      rebuildViews: inRequestContext(QUEUE.views, logger, rebuildViewsHandler(knex)),
    }),
    metrics,
  );
}
