import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections for BullMQ (DESIGN §11): workers and blocking readers must never give up on a
 * command (`maxRetriesPerRequest: null`); the API's producer fails fast when Redis is down
 * (`enableOfflineQueue: false`) so a write answers 503 instead of hanging.
 */
export function createRedis(url: string, role: 'producer' | 'worker'): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 }
      : { maxRetriesPerRequest: null };
  return new Redis(url, options);
}
