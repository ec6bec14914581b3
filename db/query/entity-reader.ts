import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import type { ExpandItem } from '../../domain/odata';
import type { ReadOptions } from '../../domain/queries/read-options';
import { EntityScope, type RowSource } from './entity-scope';
import { FilterCompiler } from './filter.compiler';
import { documentSql, orderSql } from './representation.sql';
import { SqlContext } from './sql-context';

/**
 * Read-side queries: they skip the domain model and go straight to SQL (one statement per page,
 * whatever the expansions), returning JSON text ready to send.
 */

export interface Page {
  /** A JSON array, as text. */
  json: string;
  total?: number;
}

export interface KeyedRow {
  /** The entity, as JSON text. */
  json: string;
  version: number;
}

/** Extra WHERE conditions contributed by other read features (e.g. `$search`). */
export interface ExtraCondition {
  sql: string;
  params: unknown[];
  /** An ORDER BY prefix used when the client gave no `$orderby` (e.g. relevance). */
  defaultOrder?: { sql: string; params: unknown[] };
}

function entitySource(entity: EntityDefinition): RowSource {
  return { kind: 'entity', def: entity };
}

interface CompiledWhere {
  ctx: SqlContext;
  scope: EntityScope;
  where: string[];
}

function compileWhere(entity: EntityDefinition, options: ReadOptions, extra?: ExtraCondition): CompiledWhere {
  const ctx = new SqlContext();
  const scope = new EntityScope(entitySource(entity), 'r', ctx, '$filter');
  const where: string[] = [];
  if (options.filter) where.push(FilterCompiler.compile(options.filter, scope));
  if (extra) {
    where.push(extra.sql);
    ctx.params.push(...extra.params);
  }
  return { ctx, scope, where };
}

function whereSql(where: string[]): string {
  return where.length ? `where ${where.join(' and ')}` : '';
}

/**
 * `from … where … order by …` of the root rows a read selects (table alias `r`), before any page
 * cut. List pages and exports share it, so both select and order the same rows.
 */
export function rootRowsSql(
  entity: EntityDefinition,
  options: ReadOptions,
  extra?: ExtraCondition,
): { sql: string; ctx: SqlContext } {
  const { ctx, scope, where } = compileWhere(entity, options, extra);
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
 * Root rows are paged first (filter, order, limit, offset over the base table and the joins its
 * paths need), then the JSON is built for that page only, so skipped rows cost no expansion.
 */
export function listSql(
  entity: EntityDefinition,
  options: ReadOptions,
  extra?: ExtraCondition,
): { sql: string; params: unknown[] } {
  const { sql: rows, ctx } = rootRowsSql(entity, options, extra);
  const limit = ctx.param(options.top);
  const offset = ctx.param(options.skip);
  const page = `select r.id ${rows} limit ${limit} offset ${offset}`;
  // The document precedes the page in the statement's text, so its parameters come first.
  const docCtx = new SqlContext('e');
  const doc = documentSql(entitySource(entity), 'd', 'list', options.expand, docCtx);
  // array(subquery) keeps the page's order; ordinality carries it into the aggregate.
  const sql = `select coalesce(json_agg(${doc} order by p.ord), '[]'::json)::text as json from unnest(array(${page})) with ordinality as p(id, ord) join ${entity.table} d on d.id = p.id`;
  return { sql, params: [...docCtx.params, ...ctx.params] };
}

export async function listEntities(
  knex: Knex,
  entity: EntityDefinition,
  options: ReadOptions,
  extra?: ExtraCondition,
): Promise<Page> {
  const { sql, params } = listSql(entity, options, extra);
  const [rows, total] = await Promise.all([
    knex.raw<{ rows: { json: string }[] }>(sql, params as Knex.RawBinding[]),
    options.count ? countEntities(knex, entity, options, extra) : Promise.resolve(undefined),
  ]);
  return { json: rows.rows[0]?.json ?? '[]', total };
}

export async function countEntities(
  knex: Knex,
  entity: EntityDefinition,
  options: ReadOptions,
  extra?: ExtraCondition,
): Promise<number> {
  const { sql, params } = countSql(entity, options, extra);
  const result = await knex.raw<{ rows: { n: number }[] }>(sql, params as Knex.RawBinding[]);
  return result.rows[0]?.n ?? 0;
}

/** The count of rows a read selects (same filter and search, no ordering or page). */
export function countSql(
  entity: EntityDefinition,
  options: ReadOptions,
  extra?: ExtraCondition,
): { sql: string; params: unknown[] } {
  const { ctx, scope, where } = compileWhere(entity, options, extra);
  return {
    sql: `select count(*)::int as n from ${entity.table} r ${scope.joinSql.join(' ')} ${whereSql(where)}`,
    params: ctx.params,
  };
}

/** SQL of a keyed read (the entity as JSON text plus its version). */
/** The statement of a plain keyed read per entity: the same text whatever the key (built once). */
const plainKeyedSql = new Map<EntityDefinition, string>();

export function keyedSql(
  entity: EntityDefinition,
  id: number,
  expand: readonly ExpandItem[] = [],
): { sql: string; params: unknown[] } {
  const cached = expand.length ? undefined : plainKeyedSql.get(entity);
  if (cached) return { sql: cached, params: [id] };
  const ctx = new SqlContext();
  const doc = documentSql(entitySource(entity), 'd', 'keyed', expand, ctx);
  const sql = `select ${doc}::text as json, d.version from ${entity.table} d where d.id = ${ctx.param(id)}`;
  // Only a statement whose one parameter is the key can be reused for another key.
  if (!expand.length && ctx.params.length === 1) plainKeyedSql.set(entity, sql);
  return { sql, params: ctx.params };
}

/** One entity as a keyed GET shows it (full form, Geometry included), or null. */
export async function readEntity(
  knex: Knex | Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  expand: readonly ExpandItem[] = [],
): Promise<KeyedRow | null> {
  const { sql, params } = keyedSql(entity, id, expand);
  const result = await knex.raw<{ rows: KeyedRow[] }>(sql, params as Knex.RawBinding[]);
  return result.rows[0] ?? null;
}
