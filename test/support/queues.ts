import { QueueEvents, type Job, type JobsOptions, type Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../../infra/config/load-config';
import { encodeId } from '../../domain/ids/id-codec';
import { eventName, type DomainEvent, type EventVerb } from '../../domain/events/domain-event';
import {
  JOBS,
  eventBurstJob,
  eventJob,
  webhookDeliveryJob,
  type EventBurstData,
} from '../../domain/queues/job-registry';
import { ALL_QUEUES, QUEUE, type QueueName } from '../../domain/queues/queue-contracts';
import type { ExecutionContext } from 'ava';
import type { Stack } from './stack';
import { createRedis, queuePrefix, withBullConnection } from '../../infra/redis';
import { openQueue } from '../../infra/queues';

/** A queue of a test stack on a connection of its own (one Redis or the cluster), as the service makes it. */
export function testQueue(config: AppConfig, name: QueueName): Queue {
  return openQueue(config, name, { own: 'worker' }, () => undefined);
}

/** Real BullMQ queues of a test stack, for publishing jobs the way the relay and the API do. */
export class TestQueues {
  private readonly queues = new Map<QueueName, Queue>();
  private readonly events = new Map<QueueName, QueueEvents>();

  constructor(private readonly config: AppConfig) {}

  queue(name: QueueName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = testQueue(this.config, name);
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * The queue's events reader. It reads on from the stream's last entry as it is now: BullMQ's
   * default (`$`, "from whenever my first read arrives") would miss events written between
   * `waitUntilReady` and its first blocking read, a window that is wider on a Redis Cluster.
   */
  async queueEvents(name: QueueName): Promise<QueueEvents> {
    let e = this.events.get(name);
    if (!e) {
      const config = this.config;
      const prefix = queuePrefix(config, name);
      const reader = createRedis(config.redis, 'worker');
      let lastEventId: string;
      try {
        const [last] = await reader.xrevrange(`${prefix}:${name}:events`, '+', '-', 'COUNT', 1);
        lastEventId = last?.[0] ?? '0-0';
      } finally {
        reader.disconnect();
      }
      e = withBullConnection(
        config.redis,
        'worker',
        (connection): QueueEvents => new QueueEvents(name, { connection, prefix, lastEventId }),
      );
      await e.waitUntilReady();
      this.events.set(name, e);
    }
    return e;
  }

  /**
   * Adds a job and waits for it to finish. The events reader is made ready first: it only sees
   * events that happen after it starts, so a fast job would otherwise finish unseen.
   */
  async run(
    queue: QueueName,
    name: string,
    data: unknown,
    opts: JobsOptions = {},
    timeoutMs = 10_000,
  ): Promise<unknown> {
    const events = await this.queueEvents(queue);
    const job = await this.queue(queue).add(name, data, opts);
    return job.waitUntilFinished(events, timeoutMs);
  }

  /** Publishes an event to every event queue, as a burst of one (as the OutboxPublisher does), and waits. */
  async publish(event: DomainEvent): Promise<void> {
    await this.publishBurst([event]);
  }

  /** Delivers one event as a single-event job (how releases before bursts published) and waits. */
  async deliverSingle(queue: QueueName, event: DomainEvent, opts: JobsOptions = {}): Promise<unknown> {
    const job = eventJob(event);
    return this.run(queue, job.name, job.data, { ...job.opts, ...opts });
  }

  /**
   * Publishes a burst of events to every event queue (as the OutboxPublisher does), or to `to`,
   * and waits until each has handled it.
   */
  async publishBurst(
    events: DomainEvent[],
    opts: JobsOptions = {},
    to: readonly QueueName[] = JOBS.eventBurst.queues,
  ): Promise<void> {
    const job = eventBurstJob(events);
    for (const name of to) await this.run(name, job.name, job.data, { ...job.opts, ...opts });
  }

  /** The burst job on `queue` that carries the event `eventId`, if it is still kept. */
  async burstOf(queue: QueueName, eventId: string): Promise<Job<EventBurstData> | undefined> {
    const jobs = (await this.queue(queue).getJobs(['completed', 'waiting', 'active', 'failed', 'delayed'])) as Job<
      EventBurstData | undefined
    >[];
    return jobs.find((job) => job.data?.events?.some((event) => event.eventId === eventId)) as
      Job<EventBurstData> | undefined;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.events.values()].map((e) => e.close()));
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
  }
}

export function makeEvent(
  entityType: string,
  verb: EventVerb,
  dbId: number,
  extra: Partial<DomainEvent> = {},
): DomainEvent {
  return {
    eventId: randomUUID(),
    name: eventName(entityType, verb),
    entityType,
    entityId: encodeId(entityType, dbId),
    dbId,
    changedFields: [],
    subject: 'tester',
    commandId: randomUUID(),
    occurredAt: new Date().toISOString(),
    version: 1,
    references: {},
    ...extra,
  };
}

/** Polls until `check` holds or the deadline passes (no fixed sleeps). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * What an admin sees of the queues on a store setup (one Redis, a Cluster, Sentinel): a rebuild
 * queued, `/Jobs` listing each queue's own jobs with their count, Bull Board listing every queue
 * with the commands already completed.
 */
export async function checkQueuesListed(t: ExecutionContext, stack: Stack): Promise<void> {
  const rebuild = await stack.request('POST', '/Jobs/RebuildViews');
  t.is(rebuild.status, 202, rebuild.text);
  // A delivery to no subscription (the stack has none): its worker completes it sending nothing.
  const webhooks = testQueue(stack.config, QUEUE.webhooks);
  try {
    const delivery = webhookDeliveryJob({ eventId: randomUUID(), eventType: 'SchemeCreated', subscriptionId: 1 }, 1);
    await webhooks.add(delivery.name, delivery.data, delivery.opts);
  } finally {
    await webhooks.close();
  }
  for (const name of ALL_QUEUES) {
    const res = await stack.get(`/Jobs?queue=${name}&$count=true`);
    t.is(res.status, 200, res.text);
    const entries = res.body as { Queue: string }[];
    t.true(entries.length > 0, `${name} lists its jobs`);
    t.true(
      entries.every((entry) => entry.Queue === name),
      name,
    );
    t.true(Number(res.headers.get('x-total-count')) >= entries.length);
  }
  const board = await stack.get('/admin/queues/api/queues');
  t.is(board.status, 200, board.text);
  const queues = (board.body as { queues: { name: string; counts: Record<string, number> }[] }).queues;
  t.deepEqual(queues.map((q) => q.name).sort(), [...ALL_QUEUES].sort());
  t.true(queues.find((q) => q.name === QUEUE.commands)!.counts.completed! > 0);
}
