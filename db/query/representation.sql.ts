import { encodedIdSql, isoTimestampSql } from '../sql/encoded-id.sql';
import { EntityScope, filterSql, orderSql } from './entity-scope';
import { collectionsOf, fieldsOf, relationsOf, rowSource, type RowSource } from '../../domain/queries/path-resolver';
import {
  complexItemsSelecting,
  DEFAULT_ORDERING,
  ODATA_COMPLEX_ITEMS,
  PLAIN_DOCUMENT,
  type DocumentPlan,
  type ODataControl,
} from './read-plan';
import type { SqlBuilder } from './sql-builder';

/**
 * Builds the JSON of a row in Postgres (one `json_build_object` per row, correlated `json_agg`
 * subqueries per expanded collection), so a page with any expansions is one statement and the
 * API only forwards text. The shape is spec 2.1/2.2 and DESIGN §4: `Id` encoded, relations as
 * `{ "Id" }` or null unless expanded, always-populated collections always present. It consumes a
 * DocumentPlan (read-plan.ts), which has checked every expansion already.
 */

export type ReadMode = 'keyed' | 'list';

export function rowIdSql(source: RowSource, alias: string): string {
  // The five tables of spec 2.3 store it; elsewhere it is computed (cheap, immutable).
  return source.kind === 'entity' && source.def.storesEncodedId
    ? `${alias}.encoded_id`
    : encodedIdSql(source.def.name, `${alias}.id`);
}

function refSql(typeName: string, keySql: string): string {
  return `case when ${keySql} is null then null else json_build_object('Id', ${encodedIdSql(typeName, keySql)}) end`;
}

/**
 * The control information of an `/odata` entity (DESIGN §17), before its properties: `@odata.etag`
 * (the root's entity tag, `"<version>"`), and with `odata.metadata=full` its absolute id and edit
 * link (`<service root>/Schemes('k')`) and its type. Owned records (complex values) carry none.
 */
function controlMembers(source: RowSource, alias: string, control: ODataControl, builder: SqlBuilder): string[] {
  if (source.kind !== 'entity') return [];
  const members: string[] = [];
  if (control.etag) members.push(`'@odata.etag', '"' || ${alias}.version || '"'`);
  if (control.full) {
    const root = builder.param(control.full.serviceRoot);
    const id = `${root}::text || '/${source.def.route}(''' || ${rowIdSql(source, alias)} || ''')'`;
    members.push(`'@odata.id', ${id}`, `'@odata.editLink', ${id}`);
    members.push(`'@odata.type', '#${control.full.namespace}.${source.def.name}'`);
  }
  return members;
}

/** The JSON object of one row of `source` under `alias`. */
export function documentSql(
  source: RowSource,
  alias: string,
  mode: ReadMode,
  plan: DocumentPlan,
  builder: SqlBuilder,
  only?: readonly string[],
): string {
  const odata = plan.odata;
  const members: string[] = odata ? controlMembers(source, alias, odata.control, builder) : [];
  // An entity always shows its key; a complex item's Id is a property like the others.
  if (!odata?.complex || !odata.select || odata.select.has('Id')) members.push(`'Id', ${rowIdSql(source, alias)}`);
  // `$select` under /odata (the root shows every member); `only`: a list's reduced form.
  const shown = (name: string) => (!only || only.includes(name)) && (!odata?.select || odata.select.has(name));

  for (const [name, field] of Object.entries(fieldsOf(source))) {
    if (!shown(name)) continue;
    const col = `${alias}.${field.column}`;
    members.push(`'${name}', ${field.kind === 'datetime' ? isoTimestampSql(col) : col}`);
  }
  for (const [name, relation] of Object.entries(relationsOf(source))) {
    const keySql = `${alias}.${relation.column}`;
    const expanded = plan.relations.get(name);
    if (!expanded) {
      // Under /odata an unexpanded navigation property is left out.
      if (shown(name) && !odata) members.push(`'${name}', ${refSql(relation.target, keySql)}`);
      continue;
    }
    // An expansion is shown whatever `$select` says (OData); a reduced form never has one.
    if (only && !only.includes(name)) continue;
    const target = rowSource(relation.target);
    const a = builder.alias();
    const doc = documentSql(target, a, mode, expanded, builder);
    members.push(`'${name}', (select ${doc} from ${target.def.table} ${a} where ${a}.id = ${keySql})`);
  }
  for (const [name, collection] of Object.entries(collectionsOf(source))) {
    const expanded = plan.collections.get(name);
    if (expanded ? only && !only.includes(name) : !collection.alwaysPopulated || !shown(name)) continue;
    const target = rowSource(collection.target);
    const a = builder.alias();
    const reduced = !expanded && mode === 'list' && collection.listForm ? collection.listForm : undefined;
    const chosen = odata?.within?.get(name);
    const unexpanded = chosen ? complexItemsSelecting(chosen) : odata ? ODATA_COMPLEX_ITEMS : PLAIN_DOCUMENT;
    const doc = documentSql(target, a, mode, expanded?.document ?? unexpanded, builder, reduced);
    const scope = new EntityScope(target, a, builder);
    const where = [`${a}.${collection.foreignKey} = ${alias}.id`];
    if (expanded?.filter) where.push(filterSql(expanded.filter, scope));
    const order = orderSql(
      expanded?.ordering ?? DEFAULT_ORDERING,
      scope,
      keepsWrittenOrder(target) ? [`${a}.position`] : [],
    );
    // An expansion without `$top` shows its first MAX_EXPAND_TOP items (DESIGN §13; the plan says).
    const top = expanded?.top;
    const limit = top !== undefined ? ` limit ${builder.param(top)}` : '';
    const offset = expanded?.skip ? ` offset ${builder.param(expanded.skip)}` : '';
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

/** Owned rows have a `position` column recording written order (DESIGN §10). */
function keepsWrittenOrder(source: RowSource): boolean {
  return source.kind === 'owned' || source.def.keepsWrittenOrder === true;
}
