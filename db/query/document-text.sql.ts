import type { ScalarField } from '../../domain/entities';
import { collectionsOf, fieldsOf, relationsOf, rowSource, type RowSource } from '../../domain/queries/path-resolver';
import { encodedIdFastSql, isoTimestampSql } from '../sql/encoded-id.sql';
import { EntityScope, orderSql } from './entity-scope';
import { DEFAULT_ORDERING } from './read-plan';
import type { SqlBuilder } from './sql-builder';

/**
 * A row's keyed document as text built by concatenation: exactly the bytes `documentSql` (its
 * `json_build_object` / `json_agg`) gives for the keyed form with the named collections shown, for
 * the NDJSON export. `json_build_object` looks up the JSON category of every argument, keys
 * included, on every call, which was most of the export's Postgres time: 100k seeded schemes with
 * their 540k child documents took 2.2–2.4 s of Postgres CPU as JSON, 1.6 s as text, 1.2–1.3 s
 * with `encodedIdFastSql` and the presorted aggregation below.
 * Values go through `to_json` (one lookup each) unless their text is already JSON: integers, the
 * timestamp format, encoded Ids.
 */

/** Separator and key of a member after the first, as `json_build_object` writes them (`{"A" : 1, "B" : 2}`). */
function key(name: string): string {
  return `', "${name}" : '`;
}

function valueSql(field: ScalarField, col: string): string {
  if (field.kind === 'datetime') return `coalesce('"' || ${isoTimestampSql(col)} || '"', 'null')`;
  if (field.kind === 'integer') return `coalesce(${col}::text, 'null')`;
  // Strings need escaping, dates and numbers their JSON form (NaN and Infinity are quoted).
  return `coalesce(to_json(${col})::text, 'null')`;
}

function idSql(source: RowSource, alias: string): string {
  return source.kind === 'entity' && source.def.storesEncodedId
    ? `${alias}.encoded_id`
    : encodedIdFastSql(source.def.name, `${alias}.id`);
}

/**
 * The document of the row of `source` under `alias`: fields, relations as `{"Id" : …}` or null,
 * then each collection of `shown` in definition order — from `precomputed` (the text inside the
 * brackets) when given there, else from a correlated subquery.
 */
export function documentTextSql(
  source: RowSource,
  alias: string,
  builder: SqlBuilder,
  shown: readonly string[],
  precomputed?: ReadonlyMap<string, string>,
): string {
  const parts = [`'{"Id" : "' || ${idSql(source, alias)} || '"'`];
  for (const [name, field] of Object.entries(fieldsOf(source))) {
    parts.push(`${key(name)} || ${valueSql(field, `${alias}.${field.column}`)}`);
  }
  for (const [name, relation] of Object.entries(relationsOf(source))) {
    const k = `${alias}.${relation.column}`;
    parts.push(
      `${key(name)} || case when ${k} is null then 'null' else '{"Id" : "' || ${encodedIdFastSql(relation.target, k)} || '"}' end`,
    );
  }
  for (const name of Object.keys(collectionsOf(source))) {
    if (!shown.includes(name)) continue;
    const items = precomputed?.get(name) ?? correlatedItemsSql(source, alias, name, builder);
    parts.push(`${key(name)} || '[' || ${items} || ']'`);
  }
  return `(${parts.join(' || ')} || '}')`;
}

/** Collections every read of `source` shows: what a plain (unexpanded) document holds. */
export function alwaysPopulated(source: RowSource): string[] {
  return Object.entries(collectionsOf(source))
    .filter(([, collection]) => collection.alwaysPopulated)
    .map(([name]) => name);
}

function collectionParts(source: RowSource, name: string, builder: SqlBuilder) {
  const collection = collectionsOf(source)[name];
  if (!collection) throw new Error(`${source.def.name} has no collection ${name}`);
  const target = rowSource(collection.target);
  const a = builder.alias();
  const doc = documentTextSql(target, a, builder, alwaysPopulated(target));
  const writtenOrder = target.kind === 'owned' || target.def.keepsWrittenOrder === true;
  const order = orderSql(DEFAULT_ORDERING, new EntityScope(target, a, builder), writtenOrder ? [`${a}.position`] : []);
  return { table: target.def.table, foreignKey: `${a}.${collection.foreignKey}`, a, doc, order };
}

/** The items of one parent's collection, joined by `, ` as `json_agg` does ('' when empty). */
function correlatedItemsSql(source: RowSource, parentAlias: string, name: string, builder: SqlBuilder): string {
  const { table, foreignKey, a, doc, order } = collectionParts(source, name, builder);
  return `coalesce((select string_agg(${doc}, ', ' order by ${order}) from ${table} ${a} where ${foreignKey} = ${parentAlias}.id), '')`;
}

/**
 * Every parent's items of each collection in `names`, aggregated in one pass over the child table
 * and left-joined to the parent under `parentAlias`: for reading whole tables in key order, where
 * Postgres merge-joins them over the foreign-key indexes instead of one lookup per parent and
 * collection. The items arrive in order from the subquery (an incremental sort on the foreign-key
 * index) rather than through `string_agg(… order by …)`, which on Postgres 15 sorts every group on
 * its own (1.61 → 1.48 s of CPU for the seeded schemes); the aggregate takes its input in the
 * subquery's order, what Postgres 16 plans by itself for an ordered aggregate. The tests compare
 * the lines with the keyed reads. `values` feeds `documentTextSql`'s `precomputed`.
 */
export function aggregatedItemsSql(
  source: RowSource,
  parentAlias: string,
  names: readonly string[],
  builder: SqlBuilder,
): { joins: string[]; values: Map<string, string> } {
  const joins: string[] = [];
  const values = new Map<string, string>();
  for (const name of names) {
    const { table, foreignKey, a, doc, order } = collectionParts(source, name, builder);
    const agg = builder.alias();
    const items = `select ${foreignKey} as parent, ${doc} as doc from ${table} ${a} order by ${foreignKey}, ${order}`;
    joins.push(
      `left join (select i.parent, string_agg(i.doc, ', ') as docs from (${items}) i group by i.parent) ${agg} on ${agg}.parent = ${parentAlias}.id`,
    );
    values.set(name, `coalesce(${agg}.docs, '')`);
  }
  return { joins, values };
}
