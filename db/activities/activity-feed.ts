import type { Knex } from 'knex';
import { Activity } from '../../domain/entities/read-models';
import { entitySource } from '../../domain/queries/path-resolver';
import { PLAIN_DOCUMENT } from '../query/read-plan';
import { documentSql } from '../query/representation.sql';
import { SqlBuilder } from '../query/sql-builder';

/**
 * The reads of the change feed (GET /Changes, DESIGN §16): pages of the activity log in id order,
 * each entry's JSON built by Postgres with the very expression a keyed GET /Activities/<Id> uses
 * (db/query/representation.sql.ts), so a feed event's data is that representation, byte for byte.
 */

export interface FeedRow {
  id: number;
  eventType: string;
  /** The entry as GET /Activities/<Id> shows it (JSON text). */
  json: string;
}

let pageSql: string | undefined;

function feedPageSql(): string {
  if (pageSql) return pageSql;
  const builder = new SqlBuilder();
  const doc = documentSql(entitySource(Activity), 'd', 'keyed', PLAIN_DOCUMENT, builder);
  const text = `select d.id, d.event_type, ${doc}::text as json from activities d where d.id > ${builder.param(0)} and d.id <= ${builder.param(0)} order by d.id limit ${builder.param(0)}`;
  pageSql = builder.statement(text).sql;
  return pageSql;
}

/** Entries with `after < id <= upTo`, in id order, at most `limit` of them. */
export async function activitiesAfter(
  knex: Pick<Knex, 'raw'>,
  after: number,
  limit: number,
  upTo = 2147483647,
): Promise<FeedRow[]> {
  const result = await knex.raw<{ rows: { id: number; event_type: string; json: string }[] }>(feedPageSql(), [
    after,
    upTo,
    limit,
  ]);
  return result.rows.map((row) => ({ id: row.id, eventType: row.event_type, json: row.json }));
}

/** The largest id in the log (0 when it is empty): where a feed without a resume point starts. */
export async function latestActivityId(knex: Pick<Knex, 'raw'>): Promise<number> {
  const result = await knex.raw<{ rows: { id: number | null }[] }>('select max(id) as id from activities');
  return result.rows[0]?.id ?? 0;
}
