import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../infra/redis';

/**
 * At most `max` exports per subject at once across every API process (DESIGN §13). Each running
 * export is a member of a per-subject sorted set scored by its last heartbeat, so the slot of an
 * export whose process died frees itself once the heartbeat stops (STALE_AFTER_MS) instead of
 * blocking that subject for good.
 */
const HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 3 * HEARTBEAT_MS;

/** Drop stale members, then add this one if the set has room; 1 when added, 0 when full. */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export interface ExportSlot {
  release(): void;
}

export interface ExportSlots {
  /** A slot for this subject, or undefined when it already runs `max` exports. */
  acquire(subject: string): Promise<ExportSlot | undefined>;
}

export function exportSlots(
  redis: RedisClient,
  prefix: string,
  max: number,
  onStoreError: (err: unknown) => void,
): ExportSlots {
  const keyOf = (subject: string) => `${prefix}:exports:${subject}`;
  return {
    async acquire(subject) {
      const key = keyOf(subject);
      const member = randomUUID();
      try {
        const added = await redis.eval(ACQUIRE, 1, key, Date.now(), STALE_AFTER_MS, max, member);
        if (added !== 1) return undefined;
      } catch (err) {
        // Redis cannot count: the per-process export guard still protects the pool.
        onStoreError(err);
        return { release: () => undefined };
      }
      const heartbeat = setInterval(() => {
        redis.multi().zadd(key, Date.now(), member).pexpire(key, STALE_AFTER_MS).exec().catch(onStoreError);
      }, HEARTBEAT_MS);
      heartbeat.unref();
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          clearInterval(heartbeat);
          redis.zrem(key, member).catch(onStoreError);
        },
      };
    },
  };
}
