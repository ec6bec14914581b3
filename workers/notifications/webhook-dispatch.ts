import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import type { DomainEvent } from '../../domain/events/domain-event';
import { webhookDeliveryJob } from '../../domain/queues/job-registry';
import { subscriptionMatches } from '../../domain/webhooks/subscription';
import { activeSubscriptions } from '../../db/webhooks/subscriptions';

/** Jobs per addBulk call: bounds one Redis round trip. */
const ADD_BULK_MAX = 1000;

/**
 * The notification side's step after it records a burst (DESIGN §16): every event of the burst —
 * not only those recorded just now, so a crash between the insert and this step loses nothing on
 * the redelivery — matched against the active subscriptions, one `webhooks` job per (event,
 * subscription), added with ids derived from both so a burst handled twice adds nothing twice.
 *
 * The subscriptions are read from Postgres for each burst (one indexed query on a small table, not
 * cached): an event committed after a subscription's 201 is relayed after that commit, so the read
 * made for its burst already sees the subscription; no cache can make a new subscription miss it.
 */
export function webhookDispatcher(deps: { knex: Knex; queue: Queue; attempts: number }) {
  return async (events: readonly DomainEvent[]): Promise<number> => {
    const subscriptions = await activeSubscriptions(deps.knex);
    if (subscriptions.length === 0) return 0;
    const jobs = [];
    for (const event of events) {
      if (typeof event?.eventId !== 'string' || typeof event.name !== 'string') continue;
      for (const subscription of subscriptions) {
        if (!subscriptionMatches(subscription.events, event.name)) continue;
        const job = webhookDeliveryJob(
          { eventId: event.eventId, eventType: event.name, subscriptionId: subscription.id },
          deps.attempts,
        );
        jobs.push({ name: job.name, data: job.data, opts: job.opts });
      }
    }
    for (let i = 0; i < jobs.length; i += ADD_BULK_MAX) await deps.queue.addBulk(jobs.slice(i, i + ADD_BULK_MAX));
    return jobs.length;
  };
}
