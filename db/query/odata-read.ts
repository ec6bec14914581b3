import { entityByName, type EntityDefinition } from '../../domain/entities';
import { keyOf, readableEntityOf } from '../../domain/entities/entity-key';
import { badRequest, notFound } from '../../domain/errors/domain-error';
import { keyPredicateOf } from '../../domain/odata/key-predicate';
import { encodeId } from '../../domain/ids/id-codec';
import { nextPageAddress } from '../../domain/queries/next-page-link';
import { entitySource, memberOf } from '../../domain/queries/path-resolver';
import { parseReadOptions, type ReadOptions } from '../../domain/queries/read-options';
import type { ReadResult } from '../../domain/results/request-result';
import { entityTagOf, ifNoneMatchMatches } from '../../domain/writes/entity-version';
import { countStatement, fetchCount, readEntity } from './entity-reader';
import { pageAndCount, type ReadRunner, type ReadSettings } from './read-operation';
import { compiledPlan, keptPlan } from './list-plans';
import { planCount, planRead, type ODataControl, type ODataPlanning, type ReadPlan } from './read-plan';
import type { ReadDb } from './read-timeout';

/**
 * The reads of the `/odata` service root (DESIGN §17), through the same parser, plan, SQL and
 * limits as the root's (read-operation.ts): only what OData asks differently is here. `$top` limits
 * the whole result and pages come in `odata.maxpagesize`; `$select` is honoured; a navigation
 * (`Schemes('k')/Developments`) reads the target set within its parent, and one member of it by
 * key (`Schemes('k')/Developments('d')`); a complex collection (`Schemes('k')/Notes`) is read as the
 * property's value; documents carry control information instead of unexpanded relations.
 */

export interface ODataReadRequest {
  /** The entity set (`Schemes`). */
  set: string;
  /** The key, or none for the set. */
  key?: string;
  /** A navigation property of the keyed entity, or one of its complex collection properties. */
  navigation?: string;
  /** The key of one member of a navigation collection (`Developments('d')`). */
  navigationKey?: string;
  /** `/$count` of the collection the path names (the set, or a navigation collection). */
  count?: boolean;
  /** Query options (`$format` already taken out). */
  query: Record<string, unknown>;
  /** `Prefer: odata.maxpagesize` (at most MAX_TOP), or DEFAULT_TOP. */
  pageSize: number;
  control: ODataControl;
  ifNoneMatch?: string;
}

/** A read's outcome; `empty`: a single-valued navigation property that is null (204). */
export type ODataReadResult = ReadResult | { kind: 'empty' };

/** The collection a list read pages: the set, or a parent's navigation collection. */
interface Listing {
  entity: EntityDefinition;
  /** Its address below the service root, for the next link. */
  path: string;
  within?: ReadPlan['within'];
}

export async function odataReadOperation(
  run: ReadRunner,
  request: ODataReadRequest,
  settings: ReadSettings,
): Promise<ODataReadResult> {
  const entity = readableEntityOf(request.set);
  const options = () => parseReadOptions(request.query, settings.limits);
  const odata = (): ODataPlanning => ({
    control: request.control,
    select: selectOf(request.query),
    maxNodes: settings.limits.maxSyntaxNodes,
  });
  const collectionRead = (listing: Listing) =>
    request.count ? countRead(run, listing, options(), settings) : listRead(run, listing, request, settings, odata());
  if (request.key === undefined) return collectionRead({ entity, path: request.set });
  // A key that reads as `$count` is a key like any other (`Schemes/$count/Address`: keyOf answers 404).
  const id = keyOf(entity, request.key);
  if (request.navigation === undefined) return keyedRead(run, entity, id, request, settings, odata());
  const navigation = request.navigation;
  const member = memberOf(entitySource(entity), navigation);
  // `/$count` counts a collection; a single relation has none, nor a key (OData: 404 as any unknown path).
  if (member?.kind === 'relation' && !request.count && request.navigationKey === undefined) {
    const target = await run((db) => columnOf(db, entity, member.relation.column, id));
    if (target === undefined) throw notFound(`${entity.name} '${request.key}' does not exist.`);
    if (target === null) return { kind: 'empty' };
    return keyedRead(run, entityByName(member.relation.target), target, request, settings, odata());
  }
  // Complex collections (Notes, Tags, …) are properties of the entity, not navigation properties.
  if (member?.kind === 'collection' && member.collection.alwaysPopulated && request.navigationKey === undefined) {
    return propertyRead(run, entity, id, navigation, request, settings, odata());
  }
  if (member?.kind === 'relation') {
    throw notFound(`'${navigation}' of ${entity.name} is a single entity: it takes no key and has no $count.`);
  }
  if (member?.kind !== 'collection' || member.collection.alwaysPopulated) {
    throw notFound(`'${navigation}' is not a navigation property of ${entity.name}.`);
  }
  if (request.navigationKey !== undefined) {
    return memberRead(run, { entity, id, key: request.key }, member.collection, request, settings, odata());
  }
  const collection = member.collection;
  const listing = {
    entity: entityByName(collection.target),
    path: `${request.set}${keyPredicateOf(encodeId(entity.name, id))}/${navigation}`,
    within: { column: collection.foreignKey, id },
  };
  const [exists, page] = await Promise.all([run((db) => columnOf(db, entity, 'id', id)), collectionRead(listing)]);
  if (exists === undefined) throw notFound(`${entity.name} '${request.key}' does not exist.`);
  return page;
}

/**
 * One member of a parent's navigation collection by its key (`Schemes('k')/Developments('d')`):
 * the member as a keyed read shows it, when it belongs to that parent; 404 when it does not, so a
 * key of another parent's member reads nothing through this one.
 */
async function memberRead(
  run: ReadRunner,
  parent: { entity: EntityDefinition; id: number; key: string },
  collection: { target: string; foreignKey: string },
  request: ODataReadRequest,
  settings: ReadSettings,
  odata: ODataPlanning,
): Promise<ODataReadResult> {
  const target = entityByName(collection.target);
  const memberId = keyOf(target, request.navigationKey!);
  const owner = await run((db) => columnOf(db, target, collection.foreignKey, memberId));
  if (owner !== parent.id) {
    throw notFound(
      `${target.name} '${request.navigationKey}' is not in ${request.navigation} of ${parent.entity.name} '${parent.key}'.`,
    );
  }
  return keyedRead(run, target, memberId, request, settings, odata);
}

/**
 * A complex collection property of one entity (`Schemes('k')/Notes`): its value, read as the
 * entity with only that property selected (If-None-Match compares the entity's tag), and its
 * `/$count`. OData's query options for collections are not applied to a property here, so asking
 * for one is an error, not ignored.
 */
async function propertyRead(
  run: ReadRunner,
  entity: EntityDefinition,
  id: number,
  property: string,
  request: ODataReadRequest,
  settings: ReadSettings,
  odata: ODataPlanning,
): Promise<ODataReadResult> {
  const option = Object.keys(request.query).find((name) => name.startsWith('$'));
  if (option !== undefined) {
    throw badRequest(
      `${option} does not apply to the property ${property}: read it whole, or read ${entity.route} with ${option}.`,
    );
  }
  const selected = { ...request, query: { $select: property } };
  const read = await keyedRead(run, entity, id, selected, settings, { ...odata, select: { text: property, at: 0 } });
  if (read.kind !== 'entity') return read;
  const value = (JSON.parse(read.json) as Record<string, unknown>)[property];
  const items = Array.isArray(value) ? value : [];
  if (request.count) return { kind: 'count', n: items.length, limited: false };
  // The value as a collection's page (`value` in OData's envelope), whole: no count, no next link.
  return { kind: 'page', json: JSON.stringify(items) };
}

/** `/$count` of a set or of a parent's navigation collection: only what selects rows counts. */
async function countRead(
  run: ReadRunner,
  listing: Listing,
  options: ReadOptions,
  settings: ReadSettings,
): Promise<ODataReadResult> {
  const plan = planCount(listing.entity, options);
  if (listing.within) plan.within = listing.within;
  const statement = countStatement(plan, settings.limits);
  return { kind: 'count', ...(await run((db) => fetchCount(db, statement))) };
}

function selectOf(query: Record<string, unknown>): ODataPlanning['select'] {
  const select = query.$select;
  return typeof select === 'string' ? { text: select, at: 0 } : undefined;
}

/** A parent row's column (its foreign key, or its own id): undefined when the row does not exist. */
async function columnOf(
  db: ReadDb,
  entity: EntityDefinition,
  column: string,
  id: number,
): Promise<number | null | undefined> {
  const result = await db.raw<{ rows: { v: number | null }[] }>(
    `select ${column} as v from ${entity.table} where id = ?`,
    [id],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : row.v;
}

async function keyedRead(
  run: ReadRunner,
  entity: EntityDefinition,
  id: number,
  request: ODataReadRequest,
  settings: ReadSettings,
  odata: ODataPlanning,
): Promise<ODataReadResult> {
  const parsed = parseReadOptions(request.query, settings.limits);
  const row = await run((db) =>
    readEntity(db, entity, id, { expand: parsed.expand, expandTop: parsed.expandTop, odata, ...settings.budget }),
  );
  if (!row) throw notFound(`${entity.name} '${encodeId(entity.name, id)}' does not exist.`);
  const tag = entityTagOf(row);
  if (ifNoneMatchMatches(request.ifNoneMatch, tag)) return { kind: 'unchanged', tag };
  return { kind: 'entity', json: row.json, tag };
}

/**
 * A collection page. `$top` limits the whole result (OData): a page holds at most `pageSize` of
 * it, and the next link asks for what is left.
 */
async function listRead(
  run: ReadRunner,
  listing: Listing,
  request: ODataReadRequest,
  settings: ReadSettings,
  odata: ODataPlanning,
): Promise<ODataReadResult> {
  // Kept like the root's list plans (list-plans.ts), by everything an /odata page's plan depends on.
  const { path, within } = listing;
  const key = `odata:${JSON.stringify([path, within, request.pageSize, request.control, request.query])}`;
  const compiled = keptPlan(settings, key, () => {
    const parsed = parseReadOptions(request.query, settings.limits);
    const wholeTop = request.query.$top !== undefined ? parsed.top : undefined;
    const options: ReadOptions = { ...parsed, top: Math.min(wholeTop ?? request.pageSize, request.pageSize) };
    const plan = planRead(listing.entity, options, odata);
    if (within) plan.within = within;
    return { ...compiledPlan(plan, options, settings), ...(wholeTop === undefined ? {} : { wholeTop }) };
  });
  const { options, wholeTop: whole } = compiled;
  const top = options.top;
  const { page, total } = await pageAndCount(run, compiled, settings);
  const result: Extract<ReadResult, { kind: 'page' }> = { kind: 'page', json: page.json };
  if (total !== undefined) result.total = total;
  const rest = whole === undefined ? undefined : whole - top;
  if (page.hasNext && page.lastKey !== undefined && rest !== 0) {
    const { $top: _top, ...others } = request.query;
    const next = nextPageAddress({
      route: listing.path,
      query: rest === undefined ? others : { ...others, $top: String(rest) },
      options,
      lastId: encodeId(listing.entity.name, page.lastKey),
      limits: settings.limits,
    });
    if (next) result.next = next;
  }
  return result;
}
