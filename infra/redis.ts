import type { ConnectionOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections for BullMQ (DESIGN §11): workers and blocking readers must never give up on a
 * command (`maxRetriesPerRequest: null`); the API's producer fails fast when Redis is down
 * (`enableOfflineQueue: false`) so a write answers 503 instead of hanging.
 */
export type RedisRole = 'producer' | 'worker';

function roleOptions(role: RedisRole): {
  maxRetriesPerRequest: number | null;
  enableOfflineQueue?: boolean;
  connectTimeout?: number;
} {
  return role === 'producer'
    ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 }
    : { maxRetriesPerRequest: null };
}

/** Connection settings for a BullMQ object, which then creates and closes its own connections. */
export function bullConnection(url: string, role: RedisRole): ConnectionOptions {
  return { url, ...roleOptions(role) };
}

/**
 * A connection we own (and must quit). Not auto-pipelined: on the API's producer connection
 * ioredis's enableAutoPipelining cut socket writes but cost more CPU per write than it saved
 * (API 0.57 against 0.49 ms per POST at c=32, five alternating runs; bench/README.md).
 */
export function createRedis(url: string, role: RedisRole): Redis {
  const options: RedisOptions = roleOptions(role);
  return new Redis(url, options);
}
