import type { RedisClient } from './redis';

/**
 * Work queued or running per subject (DESIGN §13: MAX_PENDING_COMMANDS_PER_SUBJECT), counted in
 * Redis so every API process sees the same number: a hash per subject whose fields are command ids
 * and whose values are `<admitted at>:<weight>`. A command weighs 1; a `$batch` weighs the writes
 * it holds (api/commands/command-bus.ts). The API admits before it enqueues and removes an id when
 * it learns the outcome; the command worker removes it when the command finishes, whoever waits.
 * Removal is idempotent (retries and repeats are harmless), and an id left behind by a crash ages
 * out after STALE_AFTER_MS instead of holding its weight for good. Admission reads the whole hash:
 * at most MAX_PENDING_COMMANDS_PER_SUBJECT fields, since every weight is at least 1.
 */

const STALE_AFTER_MS = 10 * 60_000;

/** Drop stale ids; admit this one (a repeat of an admitted id counts once) unless its weight does not fit. */
const ADMIT = `
if redis.call('HEXISTS', KEYS[1], ARGV[5]) == 1 then return 1 end
local now = tonumber(ARGV[1])
local pending = 0
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local at, weight = string.match(entries[i + 1], '^(%d+):(%d+)$')
  if at == nil or now - tonumber(at) > tonumber(ARGV[2]) then
    redis.call('HDEL', KEYS[1], entries[i])
  else
    pending = pending + tonumber(weight)
  end
end
if pending + tonumber(ARGV[4]) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[5], ARGV[1] .. ':' .. ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** `pending-work`, not the `pending-commands` sorted sets of earlier versions (they age out unread). */
export function pendingCommandsKey(prefix: string, subject: string): string {
  return `${prefix}:pending-work:${subject}`;
}

/** The connection with ADMIT defined as a command: sent by its SHA (EVALSHA), not its text, every time. */
type WithAdmit = RedisClient & {
  admitPendingWork(
    key: string,
    now: number,
    staleMs: number,
    max: number,
    weight: number,
    commandId: string,
  ): Promise<number>;
};

function withAdmit(redis: RedisClient): WithAdmit {
  if (!('admitPendingWork' in redis)) redis.defineCommand('admitPendingWork', { numberOfKeys: 1, lua: ADMIT });
  return redis as WithAdmit;
}

/**
 * True when `weight` more fits within `max` for the subject, and then counts this command with
 * that weight (the caller keeps `weight` at most `max`, so anything can run once alone).
 */
export async function admitCommand(
  redis: RedisClient,
  prefix: string,
  subject: string,
  commandId: string,
  max: number,
  weight = 1,
): Promise<boolean> {
  const admitted = await withAdmit(redis).admitPendingWork(
    pendingCommandsKey(prefix, subject),
    Date.now(),
    STALE_AFTER_MS,
    max,
    weight,
    commandId,
  );
  return admitted === 1;
}

/** The command is no longer pending (finished, failed for good, or never queued). */
export async function settleCommand(
  redis: Pick<RedisClient, 'hdel'>,
  prefix: string,
  subject: string,
  commandId: string,
): Promise<void> {
  await redis.hdel(pendingCommandsKey(prefix, subject), commandId);
}
