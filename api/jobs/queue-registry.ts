import type { Queue } from 'bullmq';
import type { RedisClient } from '../../infra/redis';
import type { RedisTarget } from '../../infra/config/load-config';
import { openQueue } from '../../infra/queues';
import type { Logger } from '../../infra/logger';
import { ALL_QUEUES, type QueueName } from '../../domain/queues/queue-contracts';

/**
 * The API's handles on every BullMQ queue, for /Jobs and Bull Board. They share the producer
 * connection (fail-fast, DESIGN §11), which the caller owns and closes after `close()`.
 */
export interface QueueRegistry {
  get(name: string): Queue | undefined;
  all(): Queue[];
  /** False while the Redis connection is down: callers answer 503 rather than 500. */
  reachable(): boolean;
  close(): Promise<void>;
}

export function isQueueName(name: string): name is QueueName {
  return (ALL_QUEUES as readonly string[]).includes(name);
}

export function createQueueRegistry(
  connection: RedisClient,
  config: { redis: RedisTarget; queuePrefix: string },
  logger: Logger,
): QueueRegistry {
  const queues = new Map<QueueName, Queue>(
    ALL_QUEUES.map((name) => [
      name,
      // Connection errors are only logged: /Jobs answers 503 meanwhile.
      openQueue(config, name, { shared: connection }, (err) =>
        logger.debug({ queue: name, err: err.message }, 'queue connection error'),
      ),
    ]),
  );
  return {
    get: (name) => (isQueueName(name) ? queues.get(name) : undefined),
    all: () => [...queues.values()],
    reachable: () => connection.status === 'ready',
    async close() {
      await Promise.allSettled([...queues.values()].map((q) => q.close()));
    },
  };
}
