import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../infra/config/load-config';
import type { Logger } from '../../infra/logger';
import type { Registry } from '../../infra/metrics/registry';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { observingEventLag } from '../shared/event-lag';
import { inBurstContext } from '../shared/job-context';
import { recordBurstHandler, recordEventHandler } from './record-activity.handler';

/** The notification worker: every domain event becomes an activity-log entry (GET /Activities). */
export function startNotificationsWorker(
  config: AppConfig,
  _logger?: Logger,
  metrics?: Registry,
): Promise<RunningWorker> {
  return startQueueWorker(
    config,
    QUEUE.notifications,
    ({ knex, logger, metrics }) =>
      observingEventLag(QUEUE.notifications, metrics, {
        eventBurst: inBurstContext(QUEUE.notifications, logger, recordBurstHandler(knex)),
        event: recordEventHandler(knex),
      }),
    metrics,
  );
}
