import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import type { ExpandItem } from '../../domain/odata';
import type { ReadOptions } from '../../domain/queries/read-options';
import { EntityScope, type RowSource } from './entity-scope';
import { FilterCompiler } from './filter.compiler';
import { documentSql, orderSql } from './representation.sql';
import { SqlContext } from './sql-context';
import { badRequest } from '../../domain/errors/domain-error';
import type { ReadDb } from './read-timeout';
import { searchExtra, type ExtraCondition } from './search-condition';

/**
 * Read-side queries: they skip the domain model and go straight to SQL (one statement per page,
 * whatever the expansions), returning JSON text ready to send.
 */

export interface Page {
  /** A JSON array, as text. */
  json: string;
}

export interface KeyedRow {
  /** The entity, as JSON text. */
  json: string;
  version: number;
  /** MD5 of `json`, for reads with expansions (their ETag covers every row shown). */
  digest?: string;
}

function entitySource(entity: EntityDefinition): RowSource {
  return { kind: 'entity', def: entity };
}

interface CompiledWhere {
  ctx: SqlContext;
  scope: EntityScope;
  where: string[];
}

/** The filter and the search of a read, compiled together (the search travels in the options). */
function compileWhere(entity: EntityDefinition, options: ReadOptions): CompiledWhere & { extra?: ExtraCondition } {
  const extra = searchExtra(entity, options);
  const ctx = new SqlContext();
  const scope = new EntityScope(entitySource(entity), 'r', ctx, '$filter');
  const where: string[] = [];
  if (options.filter) where.push(FilterCompiler.compile(options.filter, scope));
  if (extra) {
    where.push(extra.sql);
    ctx.params.push(...extra.params);
  }
  return { ctx, scope, where, extra };
}

function whereSql(where: string[]): string {
  return where.length ? `where ${where.join(' and ')}` : '';
}

/**
 * `from … where … order by …` of the root rows a read selects (table alias `r`), before any page
 * cut. List pages and exports share it, so both select and order the same rows.
 */
export function rootRowsSql(entity: EntityDefinition, options: ReadOptions): { sql: string; ctx: SqlContext } {
  const { ctx, scope, where, extra } = compileWhere(entity, options);
  const orderParts: string[] = [];
  if (!options.orderby.length && extra?.defaultOrder) {
    orderParts.push(extra.defaultOrder.sql);
    ctx.params.push(...extra.defaultOrder.params);
  }
  orderParts.push(orderSql(options.orderby, scope, '$orderby'));
  const sql = `from ${entity.table} r ${scope.joinSql.join(' ')} ${whereSql(where)} order by ${orderParts.join(', ')}`;
  return { sql, ctx };
}

/**
 * The size cap of DESIGN §13 (MAX_RESPONSE_BYTES), checked in Postgres: `json` comes back null
 * (and only `bytes` is sent) when the document is larger, so Node never holds an oversized string.
 */
export interface ReadBudget {
  maxResponseBytes?: number;
}

function capped(inner: string, budget: ReadBudget, extraColumns = ''): string {
  const max = budget.maxResponseBytes;
  // The limit comes from the configuration (an integer), never from a client.
  const json = max === undefined ? 'j.json' : `case when octet_length(j.json) <= ${Math.floor(max)} then j.json end`;
  return `select ${json} as json, octet_length(j.json) as bytes${extraColumns} from (${inner}) j`;
}

function tooLargeUnlessSent(row: { json: string | null; bytes: number } | undefined, budget: ReadBudget): void {
  if (row && row.json === null && budget.maxResponseBytes !== undefined) {
    throw badRequest(
      `the response would be ${row.bytes} bytes, over the limit of ${budget.maxResponseBytes} (MAX_RESPONSE_BYTES): ask for fewer rows with $top or fewer expansions with $expand`,
    );
  }
}

/**
 * Root rows are paged first (filter, order, limit, offset over the base table and the joins its
 * paths need), then the JSON is built for that page only, so skipped rows cost no expansion.
 */
export function listSql(
  entity: EntityDefinition,
  options: ReadOptions,
  budget: ReadBudget = {},
): { sql: string; params: unknown[] } {
  const { sql: rows, ctx } = rootRowsSql(entity, options);
  const limit = ctx.param(options.top);
  const offset = ctx.param(options.skip);
  const page = `select r.id ${rows} limit ${limit} offset ${offset}`;
  // The document precedes the page in the statement's text, so its parameters come first.
  const docCtx = new SqlContext('e', options.expandTop);
  const doc = documentSql(entitySource(entity), 'd', 'list', options.expand, docCtx);
  // array(subquery) keeps the page's order; ordinality carries it into the aggregate.
  const inner = `select coalesce(json_agg(${doc} order by p.ord), '[]'::json)::text as json from unnest(array(${page})) with ordinality as p(id, ord) join ${entity.table} d on d.id = p.id`;
  return { sql: capped(inner, budget), params: [...docCtx.params, ...ctx.params] };
}

/** One page of a list read, as JSON text (its `$count` is `countEntities`, run beside it). */
export async function listEntities(
  knex: ReadDb,
  entity: EntityDefinition,
  options: ReadOptions,
  budget: ReadBudget = {},
): Promise<Page> {
  const { sql, params } = listSql(entity, options, budget);
  const rows = await knex.raw<{ rows: { json: string | null; bytes: number }[] }>(sql, params as Knex.RawBinding[]);
  const row = rows.rows[0];
  tooLargeUnlessSent(row, budget);
  return { json: row?.json ?? '[]' };
}

export async function countEntities(knex: ReadDb, entity: EntityDefinition, options: ReadOptions): Promise<number> {
  const { sql, params } = countSql(entity, options);
  const result = await knex.raw<{ rows: { n: number }[] }>(sql, params as Knex.RawBinding[]);
  return result.rows[0]?.n ?? 0;
}

/** The count of rows a read selects (same filter and search, no ordering or page). */
export function countSql(entity: EntityDefinition, options: ReadOptions): { sql: string; params: unknown[] } {
  const { ctx, scope, where } = compileWhere(entity, options);
  return {
    sql: `select count(*)::int as n from ${entity.table} r ${scope.joinSql.join(' ')} ${whereSql(where)}`,
    params: ctx.params,
  };
}

/** The statement of a plain keyed read per entity and budget: the same text whatever the key. */
const plainKeyedSql = new Map<string, string>();

/** What a keyed read may show: expansions, their default `$top`, the size budget. */
export interface KeyedReadOptions extends ReadBudget {
  expand?: readonly ExpandItem[];
  expandTop?: number;
}

/**
 * SQL of a keyed read: the entity as JSON text, its version and, with expansions, an MD5 of the
 * whole document, so the ETag changes when any expanded row does (DESIGN §13).
 */
export function keyedSql(
  entity: EntityDefinition,
  id: number,
  read: readonly ExpandItem[] | KeyedReadOptions = [],
): { sql: string; params: unknown[] } {
  const {
    expand = [],
    expandTop,
    maxResponseBytes,
  } = Array.isArray(read) ? { expand: read } : (read as KeyedReadOptions);
  const cacheKey = `${entity.name}:${maxResponseBytes ?? ''}`;
  const cached = expand.length ? undefined : plainKeyedSql.get(cacheKey);
  if (cached) return { sql: cached, params: [id] };
  const ctx = new SqlContext('t', expandTop);
  const doc = documentSql(entitySource(entity), 'd', 'keyed', expand, ctx);
  const inner = `select ${doc}::text as json, d.version from ${entity.table} d where d.id = ${ctx.param(id)}`;
  const digest = expand.length ? ', md5(j.json) as digest' : '';
  const sql = capped(inner, { maxResponseBytes }, `, j.version${digest}`);
  // Only a statement whose one parameter is the key can be reused for another key.
  if (!expand.length && ctx.params.length === 1) plainKeyedSql.set(cacheKey, sql);
  return { sql, params: ctx.params };
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
