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
