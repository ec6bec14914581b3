import type { Knex } from 'knex';

/** Which rows of a table age out: its key, and the time column a row's age is read from. */
export interface RetainedTable {
  table: string;
  key: string;
  /** Rows whose value here is older than the window go; rows where it is null stay. */
  timeColumn: string;
}

/** Deletes up to `batch` rows older than `olderThanMs`, in one statement; returns how many. */
export async function pruneOlderThan(
  knex: Knex,
  { table, key, timeColumn }: RetainedTable,
  olderThanMs: number,
  batch = 5000,
): Promise<number> {
  return knex(table)
    .whereIn(
      key,
      knex(table)
        .select(key)
        .where(timeColumn, '<', new Date(Date.now() - olderThanMs))
        .limit(batch),
    )
    .delete();
}

export interface PruneUntilDoneOptions {
  /** Rows per statement: each is its own short transaction, so writers never wait long on it. */
  batch?: number;
  /** Stop after this long even if rows remain (the next run goes on): bounds one job's time. */
  budgetMs?: number;
}

/**
 * Deletes every row older than the window, batch after batch, until none is left or the time
 * budget is spent (DESIGN §13: retention keeps pace with any write rate). Returns rows deleted and
 * whether the table is caught up.
 */
export async function pruneUntilDone(
  knex: Knex,
  table: RetainedTable,
  olderThanMs: number,
  { batch = 5000, budgetMs = 30_000 }: PruneUntilDoneOptions = {},
): Promise<{ deleted: number; caughtUp: boolean }> {
  const deadline = Date.now() + budgetMs;
  let deleted = 0;
  for (;;) {
    const n = await pruneOlderThan(knex, table, olderThanMs, batch);
    deleted += n;
    if (n < batch) return { deleted, caughtUp: true };
    if (Date.now() >= deadline) return { deleted, caughtUp: false };
  }
}
