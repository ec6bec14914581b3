import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../infra/config/load-config';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { recordBurstHandler, recordEventHandler } from './record-activity.handler';

/** The notification worker: every domain event becomes an activity-log entry (GET /Activities). */
export function startNotificationsWorker(config: AppConfig): Promise<RunningWorker> {
  return startQueueWorker(config, QUEUE.notifications, ({ knex, logger }) => ({
    eventBurst: recordBurstHandler(knex, logger),
    event: recordEventHandler(knex),
  }));
}
