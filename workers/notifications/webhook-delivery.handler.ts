import { DelayedError, type Job } from 'bullmq';
import type { Knex } from 'knex';
import type { WebhookDeliveryData } from '../../domain/queues/job-registry';
import type { DeliveryLanes } from '../../domain/webhooks/delivery-lanes';
import { retryDelay } from '../../domain/webhooks/retry-schedule';
import { signWebhook } from '../../domain/webhooks/signature';
import { activityEntry } from '../../db/webhooks/delivery-body';
import { deliveryTarget, recordAttempt } from '../../db/webhooks/subscriptions';
import type { WebhooksConfig } from '../../infra/config/load-config';
import type { Logger } from '../../infra/logger';
import { sendWebhook } from '../../infra/webhooks/webhook-sender';

/** What a delivery job answers: sent, or why nothing was sent. */
type DeliveryResult = { delivered: true; statusCode: number | null; attempt: number } | { skipped: string };

/**
 * One webhook delivery (DESIGN §16): the event's activity entry POSTed as `{ type, timestamp, data }`
 * with the Standard Webhooks headers, signed with the subscription's secret (read from Postgres
 * here, never carried by the job). Every attempt is recorded (`/Subscriptions/<id>/Deliveries`,
 * with the time of the next one when a retry is scheduled); a failed one throws, so BullMQ retries it
 * on WEBHOOK_RETRY_SCHEDULE and, after the last, leaves the job failed for /Jobs and Bull Board.
 * A subscription deleted or turned off meanwhile gets nothing: the job completes saying so, and so
 * does one deleted while its attempt was under way (not retried).
 *
 * A delivery runs only when its subscription's lane has a place (domain/webhooks/delivery-lanes.ts);
 * a healthy subscription's delivery waits for one up to PLACE_WAIT_MS (a burst to a quick receiver
 * goes at its pace); otherwise the job is put back for about BUSY_WAIT_MS, which is no attempt: its
 * slot goes to another subscription's delivery.
 */
export function webhookDeliveryHandler(deps: {
  knex: Knex;
  config: WebhooksConfig;
  logger: Logger;
  lanes: DeliveryLanes;
}) {
  return async (job: Job<WebhookDeliveryData>, token?: string): Promise<DeliveryResult> => {
    const { subscriptionId } = job.data;
    const leave = await deps.lanes.enterWithin(subscriptionId, job.attemptsMade > 0, PLACE_WAIT_MS);
    if (!leave) {
      // Jittered, so the jobs of one busy subscription do not come back all at once.
      await job.moveToDelayed(Date.now() + BUSY_WAIT_MS * (0.75 + Math.random() / 2), token);
      throw new DelayedError();
    }
    try {
      return await deliver(deps, job);
    } finally {
      leave();
    }
  };
}

/** How long a delivery whose subscription's lane is full is put back for, about. */
const BUSY_WAIT_MS = 1000;
/** How long a healthy subscription's delivery waits in the worker for one of its places first. */
const PLACE_WAIT_MS = 250;

async function deliver(
  deps: { knex: Knex; config: WebhooksConfig; logger: Logger; lanes: DeliveryLanes },
  job: Job<WebhookDeliveryData>,
): Promise<DeliveryResult> {
  const { eventId, eventType, subscriptionId } = job.data;
  const target = await deliveryTarget(deps.knex, subscriptionId, eventId);
  if (!target) return { skipped: 'the subscription was deleted: nothing sent' };
  if (!target.active) return { skipped: 'the subscription is turned off (Active false): nothing sent' };
  if (target.delivered) return { skipped: 'already delivered to this subscription: nothing sent again' };
  const data = target.activityId === null ? null : await activityEntry(deps.knex, target.activityId);
  if (!data) return { skipped: 'the event has no activity-log entry: nothing to send' };
  const body = JSON.stringify({ type: eventType, timestamp: data.OccurredAt, data });
  const timestamp = Math.floor(Date.now() / 1000);
  const outcome = await sendWebhook({
    url: target.url,
    headers: {
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(target.secret, eventId, timestamp, body),
    },
    body,
    timeoutMs: deps.config.timeoutMs,
    allowPrivate: deps.config.allowPrivateNetworks,
  });
  deps.lanes.settle(subscriptionId, outcome);
  // attemptsMade counts finished attempts: this is the next one (a manual retry goes past the schedule).
  const attempt = job.attemptsMade + 1;
  const delay =
    !outcome.delivered && attempt < (job.opts.attempts ?? 1)
      ? retryDelay(deps.config.retrySchedule, attempt)
      : undefined;
  const recorded = await recordAttempt(deps.knex, {
    subscriptionId,
    eventId,
    eventType,
    attempt,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
    nextRetryAt: delay === undefined ? null : new Date(Date.now() + delay),
  });
  if (!recorded) {
    deps.logger.info(
      { jobId: job.id, subscriptionId, eventId, attempt },
      'webhook subscription deleted during an attempt',
    );
    return { skipped: 'the subscription was deleted during the attempt: nothing recorded, not retried' };
  }
  if (!outcome.delivered) {
    deps.logger.info(
      { jobId: job.id, subscriptionId, eventId, attempt, statusCode: outcome.statusCode, error: outcome.error },
      'webhook attempt failed',
    );
    throw new Error(outcome.error ?? 'delivery failed');
  }
  return { delivered: true, statusCode: outcome.statusCode, attempt };
}
