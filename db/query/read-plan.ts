import type { EntityDefinition } from '../../domain/entities';
import { ODataSyntaxError, parseSelect, type ExpandItem, type SelectItem, type SelectText } from '../../domain/odata';
import { badRequest } from '../../domain/errors/domain-error';
import type { ReadOptions } from '../../domain/queries/read-options';
import {
  planFilter,
  planOrdering,
  queryError,
  type PlannedExpr,
  type PlannedOrdering,
} from '../../domain/queries/filter-plan';
import {
  collectionsOf,
  entitySource,
  memberOf,
  relationsOf,
  rowSource,
  type Member,
  type RowSource,
} from '../../domain/queries/path-resolver';
import { searchExtra, type ExtraCondition } from './search-condition';

/**
 * The plan stage of a read (parse → plan → SQL, as PostgREST): the parsed options resolved against
 * the definitions once — every name, every type, every `$expand` at every level — into what the
 * SQL builders consume. Every client error (400) of a read is raised here, before any SQL exists.
 */

/** What one row's document shows beyond its own fields: expanded relations and collections. */
export interface DocumentPlan {
  relations: ReadonlyMap<string, DocumentPlan>;
  collections: ReadonlyMap<string, CollectionPlan>;
  /** Under `/odata` (DESIGN §17): how the document is shown there; absent at the root. */
  odata?: ODataDocument;
}

/** The control information an `/odata` entity carries (`odata.metadata=minimal|none|full`). */
export interface ODataControl {
  /** `@odata.etag`: the root's entity tag of the row (minimal and full). */
  etag: boolean;
  /** `odata.metadata=full`: `@odata.id` and `@odata.editLink` under this absolute service root, and `@odata.type`. */
  full?: { serviceRoot: string; namespace: string };
}

/**
 * An `/odata` document: only the selected members (with `Id`), no unexpanded navigation property
 * (a client asks `$expand=Address($select=Id)` for the related Id), its control information first.
 */
export interface ODataDocument {
  /** Members `$select` names; undefined: every member (no `$select`, or `*`). */
  select?: ReadonlySet<string>;
  /** The members of a complex collection's items a path selects (`Notes/Text`), by collection. */
  within?: ReadonlyMap<string, ReadonlySet<string>>;
  /** A complex value (an item of Notes, …): it has no key, so `Id` comes only when selected. */
  complex?: true;
  control: ODataControl;
}

/** What a read under `/odata` adds to the plan: its `$select` (the root ignores it) and control information. */
export interface ODataPlanning {
  select?: SelectText;
  control: ODataControl;
  /** MAX_SYNTAX_NODES for `$select`. */
  maxNodes?: number;
}

const NO_CONTROL: ODataControl = { etag: false };

/** The items of a complex collection (Notes, MarketBoundaries) under `/odata`: values, not entities. */
export const ODATA_COMPLEX_ITEMS: DocumentPlan = {
  relations: new Map(),
  collections: new Map(),
  odata: { control: NO_CONTROL, complex: true },
};

/** The items of a complex collection showing only what a `$select` path chose (`Notes/Text`). */
export function complexItemsSelecting(select: ReadonlySet<string>): DocumentPlan {
  return { ...ODATA_COMPLEX_ITEMS, odata: { control: NO_CONTROL, complex: true, select } };
}

/** An expanded collection: the document of each item, and which items in which order. */
export interface CollectionPlan {
  document: DocumentPlan;
  filter?: PlannedExpr;
  ordering: PlannedOrdering;
  top?: number;
  skip?: number;
}

export interface ReadPlan {
  entity: EntityDefinition;
  source: RowSource;
  /** `$search`, compiled against the search read model (it travels inside the plan). */
  search?: ExtraCondition;
  /** A navigation read (`/odata/Schemes('k')/Developments`): only the rows whose `column` is `id`. */
  within?: { column: string; id: number };
  filter?: PlannedExpr;
  ordering: PlannedOrdering;
  document: DocumentPlan;
  top: number;
  skip: number;
}

export const PLAIN_DOCUMENT: DocumentPlan = { relations: new Map(), collections: new Map() };
export const DEFAULT_ORDERING: PlannedOrdering = { items: [], byDefault: true, ordersByKey: false };

/** A list read or an export: the rows (search, filter, order, page) and their documents. */
export function planRead(entity: EntityDefinition, options: ReadOptions, odata?: ODataPlanning): ReadPlan {
  const plan = planRows(entity, options);
  plan.ordering = planOrdering(options.orderby, plan.source, '$orderby');
  plan.document = planDocument(plan.source, options.expand, options.expandTop, odata);
  return plan;
}

/** `$select` at one level, checked against `source`: the names it shows and the paths into complex items (none: every member). */
function planSelect(source: RowSource, select: SelectText, maxNodes?: number): Omit<ODataDocument, 'control'> {
  let items;
  try {
    items = parseSelect(select.text, maxNodes, select.at);
  } catch (err) {
    // The parser's message names `$select` and the position in the whole option.
    throw err instanceof ODataSyntaxError ? badRequest(err.message) : err;
  }
  const names = new Set<string>();
  const paths = new Map<string, Set<string>>();
  for (const item of items) {
    if (item.name === '*') return {};
    const member = memberOf(source, item.name);
    if (!member) throw queryError('$select', `unknown property '${item.name}' of ${source.def.name}`, item.position);
    if (item.path.length === 0) {
      names.add(item.name);
      continue;
    }
    const chosen = paths.get(item.name) ?? new Set<string>();
    chosen.add(complexPathMember(member, item));
    paths.set(item.name, chosen);
  }
  const within = new Map([...paths].filter(([name]) => !names.has(name)));
  for (const name of within.keys()) names.add(name);
  return within.size > 0 ? { select: names, within } : { select: names };
}

/**
 * The member of a complex item a `$select` path names (`Notes/Text`). OData's grammar lets a path
 * go through complex properties only: through a navigation property it is `$expand` with a `$select`.
 */
function complexPathMember(member: Member, item: SelectItem): string {
  const at = item.position;
  if (member.kind === 'relation' || (member.kind === 'collection' && !member.collection.alwaysPopulated)) {
    const hint = `${item.name}($select=${item.path.join('/')})`;
    throw queryError(
      '$select',
      `'${item.name}' is a navigation property: a path cannot go through it (ask $expand=${hint})`,
      at,
    );
  }
  if (member.kind !== 'collection')
    throw queryError('$select', `'${item.name}' is not a complex property: no path goes through it`, at);
  const inner = item.path.length === 1 ? memberOf(member.target, item.path[0]!) : undefined;
  if (!inner || (inner.kind !== 'field' && inner.kind !== 'id')) {
    const named = item.path.join('/');
    throw queryError('$select', `unknown property '${named}' of ${member.target.def.name}`, at);
  }
  return inner.name;
}

function odataDocumentOf(source: RowSource, odata: ODataPlanning): ODataDocument {
  const select =
    odata.select && odata.select.text.trim() !== '' ? planSelect(source, odata.select, odata.maxNodes) : {};
  return { ...select, control: odata.control };
}

/** A count (`$count`, `/$count`): only what selects rows; ordering and expansions play no part. */
export function planCount(entity: EntityDefinition, options: ReadOptions): ReadPlan {
  return planRows(entity, options);
}

function planRows(entity: EntityDefinition, options: ReadOptions): ReadPlan {
  const source = entitySource(entity);
  const search = searchExtra(entity, options);
  return {
    entity,
    source,
    search,
    filter: options.filter ? planFilter(options.filter, source) : undefined,
    ordering: DEFAULT_ORDERING,
    document: PLAIN_DOCUMENT,
    top: options.top,
    skip: options.skip,
  };
}

/**
 * `$expand` resolved against `source`. `expandTop` caps an expanded collection that has no `$top`
 * of its own (MAX_EXPAND_TOP). Owned collections are part of the entity itself (a client may PUT
 * back what it read, and a cut list would delete the rest); they are bounded by what a write body
 * can hold instead.
 */
export function planDocument(
  source: RowSource,
  items: readonly ExpandItem[],
  expandTop?: number,
  odata?: ODataPlanning,
): DocumentPlan {
  if (items.length === 0 && !odata) return PLAIN_DOCUMENT;
  const shown = odata ? odataDocumentOf(source, odata) : undefined;
  // Nested levels keep the control information, each with its own `$select`.
  const nested = (item: ExpandItem): ODataPlanning | undefined =>
    odata && { control: odata.control, select: item.options.select, maxNodes: odata.maxNodes };
  const expanded = expandMap(items, source);
  const relations = new Map<string, DocumentPlan>();
  const collections = new Map<string, CollectionPlan>();
  for (const [name, relation] of Object.entries(relationsOf(source))) {
    const item = expanded.get(name);
    if (!item) continue;
    const { options } = item;
    if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined) {
      throw queryError(
        '$expand',
        `'${name}' is a single related entity: only $expand applies inside its parentheses`,
        item.span.start,
      );
    }
    relations.set(name, planDocument(rowSource(relation.target), options.expand ?? [], expandTop, nested(item)));
  }
  for (const [name, collection] of Object.entries(collectionsOf(source))) {
    const item = expanded.get(name);
    if (!item) continue;
    const target = rowSource(collection.target);
    const { options } = item;
    // The items of a complex collection are values: no control information of their own.
    const itemsOData = collection.alwaysPopulated && odata ? { ...nested(item)!, control: NO_CONTROL } : nested(item);
    const document = planDocument(target, options.expand ?? [], expandTop, itemsOData);
    const filter = options.filter ? planFilter(options.filter, target, '$expand') : undefined;
    const ordering = planOrdering(options.orderby ?? [], target, '$expand');
    const top = options.top ?? (!collection.alwaysPopulated && !collection.owned ? expandTop : undefined);
    collections.set(name, { document, filter, ordering, top, skip: options.skip });
  }
  return shown ? { relations, collections, odata: shown } : { relations, collections };
}

/** Expansions by navigation name, `A/B` folded into `A($expand=B)` and repeats merged. */
function expandMap(items: readonly ExpandItem[], source: RowSource): Map<string, ExpandItem> {
  const map = new Map<string, ExpandItem>();
  for (const item of items) {
    const [name, ...rest] = item.path;
    if (!name) continue;
    const member = memberOf(source, name);
    // `$expand` applies to Notes, Tags and ExternalLinks without effect (spec 2.2).
    if (member?.kind !== 'relation' && member?.kind !== 'collection') {
      throw queryError('$expand', `unknown relation '${name}' of ${source.def.name}`, item.span.start);
    }
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
