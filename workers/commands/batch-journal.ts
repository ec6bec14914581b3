import type { RedisClient } from '../../infra/redis';
import type { Answer } from '../../domain/responses/answer';
import type { Logger } from '../../infra/logger';

/**
 * The answers a running `$batch` has given so far, unit by unit, kept in Redis beside its job. A
 * batch run again after its worker died (or a store failed) answers the units that had finished
 * with what they answered then: a GET before a later write of the batch still shows what it read,
 * not the later write. (The writes themselves are replayed from the command log, never applied
 * twice.) Best effort: an answer missing here is rebuilt from the command log and read again.
 */

/** Kept longer than any batch can be retried or recovered; deleted once the batch has finished. */
const JOURNAL_TTL_S = 24 * 3600;

export interface BatchJournal {
  /** What each finished unit answered, by unit index (empty for a first run). */
  load(batchId: string): Promise<Map<number, Answer[]>>;
  /** `log`: the batch's logger (naming its request), for a failure to keep the answers. */
  append(batchId: string, unit: number, answers: Answer[], log?: Logger): Promise<void>;
  clear(batchId: string, log?: Logger): Promise<void>;
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
      return new Map(Object.entries(entries).map(([unit, text]) => [Number(unit), JSON.parse(text) as Answer[]]));
    },
    append: (batchId, unit, answers, log) =>
      bestEffort('append', batchId, log, () =>
        redis
          .multi()
          .hset(key(batchId), String(unit), JSON.stringify(answers))
          .expire(key(batchId), JOURNAL_TTL_S)
          .exec(),
      ),
    clear: (batchId, log) => bestEffort('clear', batchId, log, () => redis.del(key(batchId))),
  };
}
