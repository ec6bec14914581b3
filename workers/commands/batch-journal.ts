import type { RedisClient } from '../../infra/redis';
import type { RequestResult } from '../../domain/results/request-result';
import type { Logger } from '../../infra/logger';

/**
 * The results a running `$batch` has come to so far, unit by unit, kept in Redis beside its job. A
 * batch run again after its worker died (or a store failed) answers the units that had finished
 * with what they came to then: a GET before a later write of the batch still shows what it read,
 * not the later write. (The writes themselves are replayed from the command log, never applied
 * twice.) Best effort: a result missing here is rebuilt from the command log and read again.
 *
 * Entries written by releases before issue 25 hold rendered answers (`{ status, headers, body }`)
 * instead of results; a batch run again across that deploy treats them as missing (see above).
 */

/** Kept longer than any batch can be retried or recovered; deleted once the batch has finished. */
const JOURNAL_TTL_S = 24 * 3600;

export interface BatchJournal {
  /** What each finished unit came to, by unit index (empty for a first run). */
  load(batchId: string): Promise<Map<number, RequestResult[]>>;
  /** `log`: the batch's logger (naming its request), for a failure to keep the results. */
  append(batchId: string, unit: number, results: RequestResult[], log?: Logger): Promise<void>;
  clear(batchId: string, log?: Logger): Promise<void>;
}

/** Results, not the answers an older release journaled (those have a `status` and no `kind`). */
function areResults(entry: unknown): boolean {
  return Array.isArray(entry) && entry.every((one) => typeof (one as { kind?: unknown } | null)?.kind === 'string');
}

export function redisBatchJournal(redis: RedisClient, prefix: string, logger: Logger): BatchJournal {
  const key = (batchId: string) => `${prefix}:batch-journal:${batchId}`;
  const bestEffort = async (what: string, batchId: string, log: Logger | undefined, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      (log ?? logger).warn({ commandId: batchId, err: (err as Error).message }, `batch journal: ${what} failed`);
    }
  };
  return {
    async load(batchId) {
      const entries = await redis.hgetall(key(batchId));
      const units = Object.entries(entries).map(([unit, text]) => [Number(unit), JSON.parse(text) as unknown] as const);
      return new Map(units.filter((entry): entry is [number, RequestResult[]] => areResults(entry[1])));
    },
    append: (batchId, unit, results, log) =>
      bestEffort('append', batchId, log, () =>
        redis
          .multi()
          .hset(key(batchId), String(unit), JSON.stringify(results))
          .expire(key(batchId), JOURNAL_TTL_S)
          .exec(),
      ),
    clear: (batchId, log) => bestEffort('clear', batchId, log, () => redis.del(key(batchId))),
  };
}
