import { startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../domain/config/load-config';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { recordActivityHandler } from './record-activity.handler';

/** The notification worker: every domain event becomes an activity-log entry (GET /Activities). */
export function startNotificationsWorker(config: AppConfig): Promise<RunningWorker> {
  return startQueueWorker(config, QUEUE.notifications, ALL_EVENT_NAMES, ({ knex }) => {
    const record = recordActivityHandler(knex);
    return Object.fromEntries(ALL_EVENT_NAMES.map((name) => [name, record]));
  });
}
