import type pg from 'pg';
import { Scheme } from '../domain/entities';

/**
 * How long the events of a POST run take to reach the search read model and the activity log,
 * read from the database alone (whatever jobs carried them): for each Scheme created in the run,
 * from its row's `created_at` (the command transaction's start) to its search documents'
 * `updated_at` (the indexing transaction's start, so a lower bound by that transaction's length)
 * and to its activity entry's `recorded_at` (the time the entry was written).
 */

export interface Lag {
  p50: number | null;
  p99: number | null;
  max: number | null;
  /** Schemes of the run whose search documents / activity entry had not appeared by the deadline. */
  missing: number;
}

export interface EventLatency {
  schemes: number;
  search: Lag;
  activities: Lag;
  /** How long after the run's last request every event had landed (or the deadline passed). */
  settledAfterMs: number;
}

/** The newest Scheme key: a run's Schemes are those above its mark at the start and at the end. */
export async function schemeMark(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ id: number | null }>(`select max(id) as id from ${Scheme.table}`);
  return rows[0]!.id ?? 0;
}

const LAGS = `
  select r.id,
         extract(epoch from s.at - r.created_at) * 1000 as search_ms,
         extract(epoch from a.recorded_at - r.created_at) * 1000 as activity_ms
  from ${Scheme.table} r
  left join lateral (select max(updated_at) as at from search_fields
                     where entity_type = $3 and entity_key = r.id) s on true
  left join activities a on a.entity_type = $3 and a.entity_id = r.encoded_id and a.event_type = $4
  where r.id > $1 and r.id <= $2`;

const SUMMARY = `
  with lags as (${LAGS})
  select count(*)::int as schemes,
         count(search_ms)::int as searched, count(activity_ms)::int as recorded,
         percentile_cont(array[0.5, 0.99]) within group (order by search_ms) as search,
         max(search_ms) as search_max,
         percentile_cont(array[0.5, 0.99]) within group (order by activity_ms) as activity,
         max(activity_ms) as activity_max
  from lags`;

interface SummaryRow {
  schemes: number;
  searched: number;
  recorded: number;
  search: number[] | null;
  search_max: number | null;
  activity: number[] | null;
  activity_max: number | null;
}

const round = (ms: number | null | undefined) => (ms == null ? null : Math.round(ms));

/**
 * Waits (up to `timeoutMs`) until every Scheme created between the marks has its search documents
 * and its activity entry, then gives the lags' p50, p99 and max.
 */
export async function eventLatency(db: pg.Pool, from: number, to: number, timeoutMs = 60_000): Promise<EventLatency> {
  const started = Date.now();
  const params = [from, to, Scheme.name, `${Scheme.name}Created`];
  for (;;) {
    const row = (await db.query<SummaryRow>(SUMMARY, params)).rows[0]!;
    const settled = row.searched === row.schemes && row.recorded === row.schemes;
    if (settled || Date.now() - started > timeoutMs) {
      return {
        schemes: row.schemes,
        search: {
          p50: round(row.search?.[0]),
          p99: round(row.search?.[1]),
          max: round(row.search_max),
          missing: row.schemes - row.searched,
        },
        activities: {
          p50: round(row.activity?.[0]),
          p99: round(row.activity?.[1]),
          max: round(row.activity_max),
          missing: row.schemes - row.recorded,
        },
        settledAfterMs: Date.now() - started,
      };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
