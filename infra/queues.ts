import { Queue } from 'bullmq';
import type { RedisTarget } from './config/load-config';
import { queuePrefix, withBullConnection, type RedisClient, type RedisRole } from './redis';
import type { QueueName } from '../domain/queues/queue-contracts';

/**
 * The one place the service builds BullMQ `Queue` objects: the producers' handles on the queues of
 * the job registry (domain/queues/job-registry.ts). Each gets its queue's key prefix (a hash tag on
 * a Redis Cluster, infra/redis.ts) and an error listener, without which BullMQ prints connection
 * errors to stderr. test/unit/queue-factory.test.ts keeps `new Queue(` out of every other file.
 */

/** Where a queue's commands go. */
export type QueueConnection =
  /** A client the caller owns and shares, such as the API's fail-fast producer; closed by the caller after the queue. */
  | { shared: RedisClient }
  /** A connection of the queue's own for this role, made and closed with the queue. */
  | { own: RedisRole };

export function openQueue(
  config: { redis: RedisTarget; queuePrefix: string },
  name: QueueName,
  connection: QueueConnection,
  onError: (err: Error) => void,
): Queue {
  const prefix = queuePrefix(config, name);
  const queue =
    'shared' in connection
      ? new Queue(name, { connection: connection.shared, prefix })
      : withBullConnection(config.redis, connection.own, (made) => new Queue(name, { connection: made, prefix }));
  queue.on('error', onError);
  return queue;
}
