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
 * A connection we own (and must quit). `autoPipelining` sends the commands issued in one turn of
 * the event loop in one write (ioredis enableAutoPipelining): for connections that carry many
 * small independent commands from concurrent requests, never for a BullMQ Worker's own.
 */
export function createRedis(url: string, role: RedisRole, { autoPipelining = false } = {}): Redis {
  const options: RedisOptions = { ...roleOptions(role), enableAutoPipelining: autoPipelining };
  return new Redis(url, options);
}
