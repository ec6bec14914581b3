import { createQueueWorker } from '../shared/run-worker';
import { workerContext, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../domain/config/load-config';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';
import { QUEUE, REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';
import { rebuildViewsHandler } from './rebuild-views.handler';
import { reindexSearchHandler } from './reindex-search.handler';

/** The view-rebuild worker: keeps the search read model current, event by event or all at once. */
export async function startViewsWorker(config: AppConfig): Promise<RunningWorker> {
  const { knex, logger } = workerContext(config, 'views');
  const reindex = reindexSearchHandler(knex);
  const worker = createQueueWorker({
    queue: QUEUE.views,
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    stalledRecovery: config.stalledRecovery,
    logger,
    handlers: {
      ...Object.fromEntries(ALL_EVENT_NAMES.map((name) => [name, reindex])),
      [REBUILD_VIEWS_JOB]: rebuildViewsHandler(knex),
    },
    expectedJobNames: [...ALL_EVENT_NAMES, REBUILD_VIEWS_JOB],
  });
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await knex.destroy();
    },
  };
}
