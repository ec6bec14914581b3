import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import type { ExpandItem } from '../../domain/odata';
import type { ReadOptions } from '../../domain/queries/read-options';
import { badRequest } from '../../domain/errors/domain-error';
import type { CountLimits } from '../../domain/queries/read-limits';
import { EntityScope, filterSql, orderSql } from './entity-scope';
import { entitySource } from '../../domain/queries/path-resolver';
import { planDocument, planRead, type ODataPlanning, type ReadPlan } from './read-plan';
import type { ReadDb } from './read-timeout';
import type { Count } from '../../domain/results/request-result';
import { documentSql } from './representation.sql';
import { SqlBuilder } from './sql-builder';

/**
 * Read-side queries: they skip the domain model and go straight to SQL (one statement per page,
 * whatever the expansions), returning JSON text ready to send.
 */

export interface Page {
  /** A JSON array, as text. */
  json: string;
  /** Whether a row follows the page (one row more than `$top` was selected, not shown). */
  hasNext: boolean;
  /** Primary key of the page's last row when there is a next page (the keyset cursor). */
  lastKey?: number;
}

export interface KeyedRow {
  /** The entity, as JSON text. */
  json: string;
  version: number;
  /** MD5 of `json`, for reads with expansions (their ETag covers every row shown). */
  digest?: string;
}

/** A statement ready for knex: its text and its bindings in text order. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * A `$count` statement: exact for a whole set (kept by the database, `table_counts`), else it counts
 * at most `limit` + 1 rows, so what a count costs is bounded whatever the table holds.
 */
export interface CountStatement extends Statement {
  limit?: number;
}

/** A list read's page statement and, when its query asks for one, its `$count` statement. */
export interface PageStatements {
  page: Statement;
  count?: CountStatement;
}

/**
 * The rows a read selects (table alias `r`): `from … where …`, and its `order by`. The WHERE is
 * compiled once and shared by the page and its count (one builder numbers their parameters).
 */
interface RootRows {
  builder: SqlBuilder;
  from: string;
  orderBy: string;
  /** `from` without the joins only the ordering needs (a count has no ordering). */
  countFrom: string;
  /** `from` with one more condition in its WHERE. */
  fromAnd(condition: string): string;
  /** `fromAnd` without the search's join, for rows already known to match it. */
  fromAndUnsearched(condition: string): string;
}

function rootRows(plan: ReadPlan, builder = new SqlBuilder()): RootRows {
  const scope = new EntityScope(plan.source, 'r', builder);
  const where: string[] = [];
  if (plan.filter) where.push(filterSql(plan.filter, scope));
  const search = plan.search;
  if (search?.where) where.push(builder.embed(search.where.sql, search.where.params));
  if (plan.within) where.push(`r.${plan.within.column} = ${builder.param(plan.within.id)}`);
  const whereSql = where.length ? `where ${where.join(' and ')}` : '';
  const searchJoin = search?.join ? builder.embed(search.join.sql, search.join.params) : '';
  const countFrom = `from ${plan.entity.table} r ${searchJoin} ${scope.joinSql.join(' ')} ${whereSql}`;
  const defaults = plan.search?.defaultOrder
    ? [builder.embed(plan.search.defaultOrder.sql, plan.search.defaultOrder.params)]
    : [];
  const orderBy = orderSql(plan.ordering, scope, defaults);
  const tables = `from ${plan.entity.table} r ${searchJoin} ${scope.joinSql.join(' ')}`;
  const fromAnd = (condition: string) => `${tables} where ${[...where, condition].join(' and ')}`;
  const fromAndUnsearched = (condition: string) =>
    `from ${plan.entity.table} r ${scope.joinSql.join(' ')} where ${[...where, condition].join(' and ')}`;
  return { builder, from: `${tables} ${whereSql}`, orderBy, countFrom, fromAnd, fromAndUnsearched };
}

/**
 * The ids of one page, in order. A `$search` without `$orderby` ranks only its window (the first
 * rows in key order, `w`, DESIGN §5 as issue 27 bounds it); the rows after the window follow in
 * key order, and are read only when the page reaches past the window. Both parts stop after the page.
 *
 * The matching documents are probed once, in key order, up to one past the window (`c`: the
 * planner walks the key order for a common word and sorts a bitmap of a rare one). The rows the
 * read selects among them (`f`) are then a key-order prefix of all it selects, so they are the
 * window when they fill it, or when the probe found every match (no more than the window). Only
 * otherwise (a filter dropped some of them) is the key order walked as before. Every gate is a
 * one-time filter: the branch it closes never runs.
 */
function pageIdsSql(plan: ReadPlan, rows: RootRows): string {
  const { builder } = rows;
  const limit = builder.param(plan.top + 1);
  const offset = builder.param(plan.skip);
  const window = plan.ordering.byDefault ? plan.search?.rankWindow : undefined;
  if (!window) return `select r.id ${rows.from} order by ${rows.orderBy} limit ${limit} offset ${offset}`;
  const size = builder.param(window.size, 'int8');
  const candidates = builder.embed(window.candidates.sql, window.candidates.params);
  const probed = `(select count(*) from c)`;
  const allProbed = `${probed} <= ${size}`;
  const prefixFull = `(select count(*) from f) = ${size}`;
  const prefix = `select r.id ${rows.fromAndUnsearched('r.id in (select c.entity_key from c)')} order by r.id limit ${size}`;
  const walked = `select r.id ${rows.fromAnd(`not (${allProbed} or ${prefixFull})`)} order by r.id limit ${size}`;
  const rank = builder.embed(window.rank.sql, window.rank.params);
  const reach = builder.param(plan.top + 1 + plan.skip, 'int8');
  const ranked = `select w.id, 0 as part, ${rank} as rank from w`;
  const pastWindow = `(select count(*) from w) = ${size} and ${size} < ${reach} and not ${allProbed}`;
  const after = `select r.id, 1 as part, 0::real as rank ${rows.fromAnd('r.id > (select max(w.id) from w)')} and ${pastWindow} order by r.id limit ${reach}`;
  return (
    `with c as materialized (${candidates} order by 1 limit ${builder.param(window.size + 1, 'int8')}),` +
    ` f as materialized (${prefix}),` +
    ` w as materialized ((select f.id from f where ${allProbed} or ${prefixFull}) union all (${walked}))` +
    ` select p.id from ((${ranked}) union all (${after})) p order by p.part, p.rank desc, p.id limit ${limit} offset ${offset}`
  );
}

/**
 * `from … where … order by …` of the root rows a read selects, before any page cut. List pages
 * and exports share it, so both select and order the same rows.
 */
export function rootRowsSql(plan: ReadPlan, builder: SqlBuilder): string {
  const rows = rootRows(plan, builder);
  return `${rows.from} order by ${rows.orderBy}`;
}

/**
 * The size cap of DESIGN §13 (MAX_RESPONSE_BYTES), checked in Postgres: `json` comes back null
 * (and only `bytes` is sent) when the document is larger, so Node never holds an oversized string.
 */
export interface ReadBudget {
  maxResponseBytes?: number;
  /**
   * MAX_RESPONSE_BYTES itself, when `maxResponseBytes` is what a `$batch` has left of it: a read
   * that would pass the limit alone is told so as alone; one that only passes what is left, so.
   */
  wholeLimit?: number;
}

function capped(inner: string, budget: ReadBudget, extraColumns = ''): string {
  const max = budget.maxResponseBytes;
  // The limit comes from the configuration (an integer), never from a client.
  const json = max === undefined ? 'j.json' : `case when octet_length(j.json) <= ${Math.floor(max)} then j.json end`;
  // `offset 0` keeps the document a subquery of its own: pulled up, it was built once per
  // reference to `j.json` (three times per keyed read).
  return `select ${json} as json, octet_length(j.json) as bytes${extraColumns} from (${inner} offset 0) j`;
}

function tooLargeUnlessSent(row: { json: string | null; bytes: number } | undefined, budget: ReadBudget): void {
  if (!row || row.json !== null || budget.maxResponseBytes === undefined) return;
  const whole = budget.wholeLimit;
  if (whole !== undefined && row.bytes <= whole) {
    throw badRequest(
      `the response would be ${row.bytes} bytes, more than the ${budget.maxResponseBytes} bytes this batch has left of MAX_RESPONSE_BYTES (${whole}): move the read to a batch of its own, or ask for fewer rows with $top or fewer expansions with $expand`,
    );
  }
  throw badRequest(
    `the response would be ${row.bytes} bytes, over the limit of ${whole ?? budget.maxResponseBytes} (MAX_RESPONSE_BYTES): ask for fewer rows with $top or fewer expansions with $expand`,
  );
}

/**
 * Root rows are paged first (filter, order, limit, offset over the base table and the joins its
 * paths need), then the JSON is built for that page only, so skipped rows cost no expansion.
 * With `counts` (COUNT_LIMIT, SEARCH_COUNT_LIMIT), the count statement shares the page's compiled WHERE.
 */
export function listStatements(plan: ReadPlan, budget: ReadBudget = {}, counts?: CountLimits): PageStatements {
  const rows = rootRows(plan);
  const { builder } = rows;
  // One row past the page says exactly whether there is a next page (the Link header); its
  // document is never built (the aggregate's FILTER is checked before its argument).
  const page = pageIdsSql(plan, rows);
  const doc = documentSql(plan.source, 'd', 'list', plan.document, builder);
  const top = builder.param(plan.top);
  // array(subquery) keeps the page's order; ordinality carries it into the aggregate.
  const inner = `select coalesce(json_agg(${doc} order by p.ord) filter (where p.ord <= ${top}), '[]'::json)::text as json, count(*) > ${top} as has_next, max(p.id) filter (where p.ord = ${top}) as last_key from unnest(array(${page})) with ordinality as p(id, ord) join ${plan.entity.table} d on d.id = p.id`;
  return {
    page: builder.statement(capped(inner, budget, ', j.has_next, j.last_key')),
    count: counts === undefined ? undefined : countOf(plan, rows, counts),
  };
}

/** The count of rows a read selects (same filter and search, no ordering or page), within `limits`. */
export function countStatement(plan: ReadPlan, limits: CountLimits): CountStatement {
  return countOf(plan, rootRows(plan), limits);
}

/**
 * A whole set (nothing filters, searches or narrows it to a parent) is counted from the slots its
 * table's triggers keep (db/migrations/…_set-counts.ts): exact, a few rows whatever the size.
 * Anything else counts the rows it selects, stopping one past its limit. A searched count goes in
 * key order, so the planner may walk the keys and stop there rather than build the bitmap of every
 * match of a common word first (`park` at 1.1M: 12-18 ms against 103-125 ms).
 */
function countOf(plan: ReadPlan, rows: RootRows, limits: CountLimits): CountStatement {
  const { builder } = rows;
  if (!plan.filter && !plan.search && !plan.within) {
    const table = builder.param(plan.entity.table);
    return builder.statement(`select coalesce(sum(n), 0)::float8 as n from table_counts where table_name = ${table}`);
  }
  const limit = plan.search ? limits.searchCountLimit : limits.countLimit;
  const reach = builder.param(limit + 1, 'int8');
  const order = plan.search ? ' order by r.id' : '';
  return {
    ...builder.statement(`select count(*)::int as n from (select 1 ${rows.countFrom}${order} limit ${reach}) c`),
    limit,
  };
}

/** One page of a list read, as JSON text (its `$count` is `fetchCount`, run beside it). */
export async function fetchPage(knex: ReadDb, statement: Statement, budget: ReadBudget = {}): Promise<Page> {
  const rows = await knex.raw<{
    rows: { json: string | null; bytes: number; has_next: boolean; last_key: number | null }[];
  }>(statement.sql, statement.params as Knex.RawBinding[]);
  const row = rows.rows[0];
  tooLargeUnlessSent(row, budget);
  return { json: row?.json ?? '[]', hasNext: row?.has_next ?? false, lastKey: row?.last_key ?? undefined };
}

export async function fetchCount(knex: ReadDb, statement: CountStatement): Promise<Count> {
  const result = await knex.raw<{ rows: { n: number }[] }>(statement.sql, statement.params as Knex.RawBinding[]);
  const n = result.rows[0]?.n ?? 0;
  const { limit } = statement;
  return limit !== undefined && n > limit ? { n: limit, limited: true } : { n, limited: false };
}

/** One page of a list read, planned and run (for callers without a plan of their own). */
export async function listEntities(
  knex: ReadDb,
  entity: EntityDefinition,
  options: ReadOptions,
  budget: ReadBudget = {},
): Promise<Page> {
  return fetchPage(knex, listStatements(planRead(entity, options), budget).page, budget);
}

/** The statement of a plain keyed read per entity and budget: the same text whatever the key. */
const plainKeyedSql = new Map<string, string>();

/** What a keyed read may show: expansions, their default `$top`, the size budget; under `/odata`, its `$select` and control information. */
export interface KeyedReadOptions extends ReadBudget {
  expand?: readonly ExpandItem[];
  expandTop?: number;
  odata?: ODataPlanning;
}

/**
 * SQL of a keyed read: the entity as JSON text, its version and, with expansions, an MD5 of the
 * whole document, so the ETag changes when any expanded row does (DESIGN §13).
 */
export function keyedSql(
  entity: EntityDefinition,
  id: number,
  read: readonly ExpandItem[] | KeyedReadOptions = [],
): Statement {
  const {
    expand = [],
    expandTop,
    maxResponseBytes,
    odata,
  } = Array.isArray(read) ? { expand: read } : (read as KeyedReadOptions);
  const cacheKey = `${entity.name}:${maxResponseBytes ?? ''}`;
  const cached = expand.length || odata ? undefined : plainKeyedSql.get(cacheKey);
  if (cached) return { sql: cached, params: [id] };
  const source = entitySource(entity);
  const plan = planDocument(source, expand, expandTop, odata);
  const builder = new SqlBuilder();
  const doc = documentSql(source, 'd', 'keyed', plan, builder);
  const inner = `select ${doc}::text as json, d.version from ${entity.table} d where d.id = ${builder.param(id)}`;
  const digest = expand.length ? ', md5(j.json) as digest' : '';
  const statement = builder.statement(capped(inner, { maxResponseBytes }, `, j.version${digest}`));
  // Only a statement whose one parameter is the key can be reused for another key.
  if (!expand.length && !odata && statement.params.length === 1) plainKeyedSql.set(cacheKey, statement.sql);
  return statement;
}

/** One entity as a keyed GET shows it (full form, Geometry included), or null. */
export async function readEntity(
  knex: ReadDb,
  entity: EntityDefinition,
  id: number,
  read: readonly ExpandItem[] | KeyedReadOptions = [],
): Promise<KeyedRow | null> {
  const { sql, params } = keyedSql(entity, id, read);
  const result = await knex.raw<{ rows: (KeyedRow & { json: string | null; bytes: number })[] }>(
    sql,
    params as Knex.RawBinding[],
  );
  const row = result.rows[0];
  if (!row) return null;
  tooLargeUnlessSent(row, Array.isArray(read) ? {} : (read as KeyedReadOptions));
  return { json: row.json as string, version: row.version, digest: row.digest ?? undefined };
}
