import { createQueueWorker } from '../shared/run-worker';
import { workerContext, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../domain/config/load-config';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { recordActivityHandler } from './record-activity.handler';

/** The notification worker: every domain event becomes an activity-log entry (GET /Activities). */
export async function startNotificationsWorker(config: AppConfig): Promise<RunningWorker> {
  const { knex, logger } = workerContext(config, 'notifications');
  const record = recordActivityHandler(knex);
  const worker = createQueueWorker({
    queue: QUEUE.notifications,
    redisUrl: config.redisUrl,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    stalledRecovery: config.stalledRecovery,
    logger,
    handlers: Object.fromEntries(ALL_EVENT_NAMES.map((name) => [name, record])),
    expectedJobNames: ALL_EVENT_NAMES,
  });
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await knex.destroy();
    },
  };
}
