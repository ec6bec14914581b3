/**
 * WEBHOOK_RETRY_SCHEDULE (DESIGN §16): the waits before each retry of a failed delivery, e.g.
 * `5s,30s,2m,10m,1h,6h,24h`: a delivery is attempted once plus once per entry, then failed.
 */

export const DEFAULT_RETRY_SCHEDULE = '5s,30s,2m,10m,1h,6h,24h';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** At most this many retries, and none longer than a week (BullMQ keeps a failed job a week). */
export const MAX_RETRIES = 20;
const MAX_WAIT_MS = 7 * 86_400_000;

/** The waits in ms; throws a RangeError naming the bad entry. */
export function parseRetrySchedule(text: string): number[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.length === 1 && items[0] === '') return [];
  if (items.length > MAX_RETRIES) throw new RangeError(`at most ${MAX_RETRIES} retries, got ${items.length}`);
  return items.map((item) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(item);
    if (!match) throw new RangeError(`'${item}' is not a duration like 500ms, 5s, 2m, 1h or 1d`);
    const ms = Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
    if (ms < 1 || ms > MAX_WAIT_MS) throw new RangeError(`'${item}' must be between 1ms and 7d`);
    return ms;
  });
}

/** The wait after the `attemptsMade`-th failed attempt (1 after the first), or undefined after the last. */
export function retryDelay(schedule: readonly number[], attemptsMade: number): number | undefined {
  return attemptsMade >= 1 ? schedule[attemptsMade - 1] : undefined;
}
