import type { RedisClient } from './redis';

/**
 * Commands queued or running per subject (DESIGN §13: MAX_PENDING_COMMANDS_PER_SUBJECT), counted in
 * Redis so every API process sees the same number: a sorted set per subject of command ids scored
 * by when they were admitted. The API admits before it enqueues and removes an id when it learns
 * the outcome; the command worker removes it when the command finishes, whoever waits. Removal is
 * idempotent (retries and repeats are harmless), and an id left behind by a crash ages out after
 * STALE_AFTER_MS instead of holding a slot for good.
 */

const STALE_AFTER_MS = 10 * 60_000;

/** Drop stale ids; admit this one (a repeat of an admitted id counts once) unless the set is full. */
const ADMIT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export function pendingCommandsKey(prefix: string, subject: string): string {
  return `${prefix}:pending-commands:${subject}`;
}

/** The connection with ADMIT defined as a command: sent by its SHA (EVALSHA), not its text, every time. */
type WithAdmit = RedisClient & {
  admitPendingCommand(key: string, now: number, staleMs: number, max: number, commandId: string): Promise<number>;
};

function withAdmit(redis: RedisClient): WithAdmit {
  if (!('admitPendingCommand' in redis)) redis.defineCommand('admitPendingCommand', { numberOfKeys: 1, lua: ADMIT });
  return redis as WithAdmit;
}

/** True when the subject has fewer than `max` commands pending, and then counts this one. */
export async function admitCommand(
  redis: RedisClient,
  prefix: string,
  subject: string,
  commandId: string,
  max: number,
): Promise<boolean> {
  const admitted = await withAdmit(redis).admitPendingCommand(
    pendingCommandsKey(prefix, subject),
    Date.now(),
    STALE_AFTER_MS,
    max,
    commandId,
  );
  return admitted === 1;
}

/** The command is no longer pending (finished, failed for good, or never queued). */
export async function settleCommand(
  redis: Pick<RedisClient, 'zrem'>,
  prefix: string,
  subject: string,
  commandId: string,
): Promise<void> {
  await redis.zrem(pendingCommandsKey(prefix, subject), commandId);
}
