import type { ExpandItem, OrderByItem } from '../../domain/odata';
import { encodedIdSql, isoTimestampSql } from '../sql/encoded-id.sql';
import {
  EntityScope,
  collectionOf,
  collectionsOf,
  fieldsOf,
  relationOf,
  relationsOf,
  rowSource,
  type RowSource,
} from './entity-scope';
import { FilterCompiler } from './filter.compiler';
import { SqlContext, queryError } from './sql-context';

/**
 * Builds the JSON of a row in Postgres (one `json_build_object` per row, correlated `json_agg`
 * subqueries per expanded collection), so a page with any expansions is one statement and the
 * API only forwards text. The shape is spec 2.1/2.2 and DESIGN §4: `Id` encoded, relations as
 * `{ "Id" }` or null unless expanded, always-populated collections always present.
 */

export type ReadMode = 'keyed' | 'list';

/** `$expand` applies to Notes, Tags and ExternalLinks without effect (spec 2.2). */
function expandMap(items: readonly ExpandItem[], source: RowSource): Map<string, ExpandItem> {
  const map = new Map<string, ExpandItem>();
  for (const item of items) {
    const [name, ...rest] = item.path;
    if (!name) continue;
    const isRelation = relationOf(source, name) !== undefined;
    const isCollection = collectionOf(source, name) !== undefined;
    if (!isRelation && !isCollection) {
      throw queryError('$expand', `unknown relation '${name}' of ${source.def.name}`, item.span.start);
    }
    // `A/B` is the same as `A($expand=B)`.
    const normalised: ExpandItem = rest.length
      ? { path: [name], span: item.span, options: { expand: [{ path: rest, options: item.options, span: item.span }] } }
      : item;
    const existing = map.get(name);
    if (existing) {
      map.set(name, {
        ...existing,
        options: {
          ...existing.options,
          expand: [...(existing.options.expand ?? []), ...(normalised.options.expand ?? [])],
        },
      });
    } else {
      map.set(name, normalised);
    }
  }
  return map;
}

export function rowIdSql(source: RowSource, alias: string): string {
  // The five tables of spec 2.3 store it; elsewhere it is computed (cheap, immutable).
  return source.kind === 'entity' && source.def.storesEncodedId
    ? `${alias}.encoded_id`
    : encodedIdSql(source.def.name, `${alias}.id`);
}

function refSql(typeName: string, keySql: string): string {
  return `case when ${keySql} is null then null else json_build_object('Id', ${encodedIdSql(typeName, keySql)}) end`;
}

/** The JSON object of one row of `source` under `alias`. */
export function documentSql(
  source: RowSource,
  alias: string,
  mode: ReadMode,
  expand: readonly ExpandItem[],
  ctx: SqlContext,
  only?: readonly string[],
  precomputed?: ReadonlyMap<string, string>,
): string {
  const expanded = expandMap(expand, source);
  const members: string[] = [`'Id', ${rowIdSql(source, alias)}`];
  const shown = (name: string) => !only || only.includes(name);

  for (const [name, field] of Object.entries(fieldsOf(source))) {
    if (!shown(name)) continue;
    const col = `${alias}.${field.column}`;
    members.push(`'${name}', ${field.kind === 'datetime' ? isoTimestampSql(col) : col}`);
  }
  for (const [name, relation] of Object.entries(relationsOf(source))) {
    if (!shown(name)) continue;
    const keySql = `${alias}.${relation.column}`;
    const item = expanded.get(name);
    if (!item) {
      members.push(`'${name}', ${refSql(relation.target, keySql)}`);
      continue;
    }
    if (
      item.options.filter ||
      item.options.orderby ||
      item.options.top !== undefined ||
      item.options.skip !== undefined
    ) {
      throw queryError(
        '$expand',
        `'${name}' is a single related entity: only $expand applies inside its parentheses`,
        item.span.start,
      );
    }
    const target = rowSource(relation.target);
    const a = ctx.alias();
    const doc = documentSql(target, a, mode, item.options.expand ?? [], ctx);
    members.push(`'${name}', (select ${doc} from ${target.def.table} ${a} where ${a}.id = ${keySql})`);
  }
  for (const [name, collection] of Object.entries(collectionsOf(source))) {
    if (!shown(name)) continue;
    const item = expanded.get(name);
    if (!item && !collection.alwaysPopulated) continue;
    const given = precomputed?.get(name);
    if (given !== undefined) {
      members.push(`'${name}', ${given}`);
      continue;
    }
    const target = rowSource(collection.target);
    const a = ctx.alias();
    const reduced = !item && mode === 'list' && collection.listForm ? collection.listForm : undefined;
    const options = item?.options ?? {};
    const doc = documentSql(target, a, mode, options.expand ?? [], ctx, reduced);
    const scope = new EntityScope(target, a, ctx, '$expand');
    const where = [`${a}.${collection.foreignKey} = ${alias}.id`];
    if (options.filter) where.push(FilterCompiler.compile(options.filter, scope, '$expand'));
    const order = orderSql(options.orderby ?? [], scope, '$expand', keepsWrittenOrder(target) ? [`${a}.position`] : []);
    // An expansion without `$top` shows its first MAX_EXPAND_TOP items (DESIGN §13). Owned
    // collections are part of the entity itself (a client may PUT back what it read, and a cut
    // list would delete the rest); they are bounded by what a write body can hold instead.
    const top = options.top ?? (item && !collection.alwaysPopulated && !collection.owned ? ctx.expandTop : undefined);
    const limit = top !== undefined ? ` limit ${ctx.param(top)}` : '';
    const offset = options.skip ? ` offset ${ctx.param(options.skip)}` : '';
    const from = `from ${target.def.table} ${a} ${scope.joinSql.join(' ')} where ${where.join(' and ')}`;
    if (!limit && !offset) {
      // The common case: aggregate in order directly, no window or subquery.
      members.push(`'${name}', (select coalesce(json_agg(${doc} order by ${order}), '[]'::json) ${from})`);
      continue;
    }
    const inner = `select ${doc} as doc, row_number() over (order by ${order}) as ord ${from} order by ${order}${limit}${offset}`;
    members.push(`'${name}', (select coalesce(json_agg(c.doc order by c.ord), '[]'::json) from (${inner}) c)`);
  }
  return `json_build_object(${members.join(', ')})`;
}

/**
 * Every collection of `source` aggregated per parent in one pass over its table, as LEFT JOINs to
 * the parent under `parentAlias`: for reading many whole parents in key order (the NDJSON export),
 * where Postgres streams them with merge joins over the foreign-key indexes instead of one
 * correlated lookup per parent and collection. `values` feeds `documentSql`'s `precomputed`.
 */
export function aggregatedCollectionsSql(
  source: RowSource,
  parentAlias: string,
  names: readonly string[],
  ctx: SqlContext,
): { joins: string[]; values: Map<string, string> } {
  const joins: string[] = [];
  const values = new Map<string, string>();
  for (const name of names) {
    const collection = collectionOf(source, name);
    if (!collection) throw new Error(`${source.def.name} has no collection ${name}`);
    const target = rowSource(collection.target);
    const a = ctx.alias();
    const doc = documentSql(target, a, 'keyed', [], ctx);
    const order = orderSql(
      [],
      new EntityScope(target, a, ctx, '$expand'),
      '$expand',
      keepsWrittenOrder(target) ? [`${a}.position`] : [],
    );
    const agg = ctx.alias();
    joins.push(
      `left join (select ${a}.${collection.foreignKey} as parent, json_agg(${doc} order by ${order}) as docs from ${target.def.table} ${a} group by ${a}.${collection.foreignKey}) ${agg} on ${agg}.parent = ${parentAlias}.id`,
    );
    values.set(name, `coalesce(${agg}.docs, '[]'::json)`);
  }
  return { joins, values };
}

/** Owned rows have a `position` column recording written order (DESIGN §10). */
function keepsWrittenOrder(source: RowSource): boolean {
  return source.kind === 'owned' || source.def.keepsWrittenOrder === true;
}

/**
 * ORDER BY for `$orderby` items, then `leading` defaults, then the primary key as the final
 * tie-breaker so pages are stable. Directions keep Postgres' default null placement so ordinary
 * btree indexes serve them.
 */
export function orderSql(
  items: readonly OrderByItem[],
  scope: EntityScope,
  option: string,
  leading: string[] = [],
): string {
  const parts: string[] = [];
  for (const item of items) {
    const resolved = scope.resolve(item.path, item.span.start);
    if (resolved.kind === 'collection')
      throw queryError(option, `cannot order by the collection '${resolved.name}'`, item.span.start);
    parts.push(`${resolved.sql} ${item.direction}`);
  }
  if (items.length === 0) parts.push(...leading);
  if (!items.some((item) => item.path.length === 1 && item.path[0] === 'Id')) parts.push(`${scope.alias}.id`);
  return parts.join(', ');
}
