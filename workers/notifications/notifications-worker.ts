import { createQueueWorker, startQueueWorker, type RunningWorker } from '../shared/worker-process';
import type { AppConfig } from '../../infra/config/load-config';
import { createLogger, type Logger } from '../../infra/logger';
import type { Registry } from '../../infra/metrics/registry';
import { QUEUE, WEBHOOK_BACKOFF } from '../../domain/queues/queue-contracts';
import { retryDelay } from '../../domain/webhooks/retry-schedule';
import { DeliveryLanes, SLOW_DELIVERY_MS } from '../../domain/webhooks/delivery-lanes';
import { createKnex } from '../../db/knex';
import { openQueue } from '../../infra/queues';
import { observingEventLag } from '../shared/event-lag';
import { inBurstContext } from '../shared/job-context';
import { recordBurstHandler, recordEventHandler } from './record-activity.handler';
import { webhookDispatcher } from './webhook-dispatch';
import { webhookDeliveryHandler } from './webhook-delivery.handler';

/**
 * The notification worker: every domain event becomes an activity-log entry (GET /Activities), and
 * every event a webhook subscription matches becomes a job on the `webhooks` queue, which a second
 * BullMQ worker of the same process delivers (DESIGN §16), WEBHOOK_CONCURRENCY at a time, shared
 * fairly between subscriptions (domain/webhooks/delivery-lanes.ts).
 */
export async function startNotificationsWorker(
  config: AppConfig,
  _logger?: Logger,
  metrics?: Registry,
): Promise<RunningWorker> {
  const logger = createLogger(QUEUE.webhooks, config.logLevel);
  const webhooks = openQueue(config, QUEUE.webhooks, { own: 'worker' }, (err) =>
    logger.debug({ queue: QUEUE.webhooks, err: err.message }, 'queue connection error'),
  );
  const webhookKnex = createKnex(config.databaseUrl, config.dbPoolMax, logger);
  const dispatch = webhookDispatcher({
    knex: webhookKnex,
    queue: webhooks,
    attempts: config.webhooks.retrySchedule.length + 1,
  });
  const schedule = config.webhooks.retrySchedule;
  const lanes = new DeliveryLanes({
    perSubscription: config.webhooks.concurrencyPerSubscription,
    slowLane: config.webhooks.slowLaneConcurrency,
    slowMs: SLOW_DELIVERY_MS,
  });
  const deliveries = createQueueWorker({
    queue: QUEUE.webhooks,
    redis: config.redis,
    queuePrefix: config.queuePrefix,
    concurrency: config.webhooks.concurrency,
    stalledRecovery: config.stalledRecovery,
    logger,
    handlers: {
      webhookDelivery: webhookDeliveryHandler({ knex: webhookKnex, config: config.webhooks, logger, lanes }),
    },
    // The wait before the n-th retry is the n-th entry of WEBHOOK_RETRY_SCHEDULE (past it: the last).
    backoffStrategy: (attemptsMade, type) =>
      type === WEBHOOK_BACKOFF ? (retryDelay(schedule, attemptsMade) ?? schedule.at(-1) ?? 0) : 0,
  });
  let notifications: RunningWorker;
  try {
    notifications = await startQueueWorker(
      config,
      QUEUE.notifications,
      ({ knex, logger, metrics }) =>
        observingEventLag(QUEUE.notifications, metrics, {
          eventBurst: inBurstContext(QUEUE.notifications, logger, recordBurstHandler(knex, dispatch)),
          event: recordEventHandler(knex, logger, dispatch),
        }),
      metrics,
    );
    await deliveries.waitUntilReady();
  } catch (err) {
    await Promise.allSettled([deliveries.close(), webhooks.close(), webhookKnex.destroy()]);
    throw err;
  }
  return {
    metrics: notifications.metrics,
    async close() {
      await Promise.allSettled([notifications.close(), deliveries.close()]);
      await Promise.allSettled([webhooks.close(), webhookKnex.destroy()]);
    },
  };
}
