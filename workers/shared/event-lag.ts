import type { Job } from 'bullmq';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { EventBurstData } from '../../domain/queues/job-registry';
import type { QueueName } from '../../domain/queues/queue-contracts';
import { eventLag, type Registry } from '../../infra/metrics/registry';

type Handler<D> = (job: Job<D>) => Promise<unknown>;

/**
 * The handlers of an event queue, observing `emapi_event_lag_seconds` {queue} for each event once
 * it is handled: now − the event's `occurredAt` (its commit), whether it came alone or in a burst.
 * A failed handling observes nothing (the retry that handles it does).
 */
export function observingEventLag<B extends Handler<EventBurstData>, E extends Handler<DomainEvent>>(
  queue: QueueName,
  registry: Registry,
  handlers: { eventBurst: B; event: E },
): { eventBurst: B; event: E } {
  const lag = eventLag(registry).labels({ queue });
  const observe = (events: readonly DomainEvent[]) => {
    const now = Date.now();
    for (const event of events) {
      const at = Date.parse(event?.occurredAt);
      if (Number.isFinite(at)) lag.observe(Math.max(0, now - at) / 1000);
    }
  };
  const eventBurst = (async (job: Job<EventBurstData>) => {
    const result = await handlers.eventBurst(job);
    observe(job.data.events);
    return result;
  }) as B;
  const event = (async (job: Job<DomainEvent>) => {
    const result = await handlers.event(job);
    observe([job.data]);
    return result;
  }) as E;
  return { eventBurst, event };
}
