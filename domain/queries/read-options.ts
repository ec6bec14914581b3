import { ODataSyntaxError, parseExpand, parseFilter, parseOrderBy, parseSearch } from '../odata';
import type { Expr, ExpandItem, OrderByItem, SearchNode } from '../odata';
import { badRequest } from '../errors/domain-error';
import { isStorableText } from '../text/storable-text';
import { DEFAULT_READ_LIMITS, type ReadLimits } from './read-limits';

/**
 * The query options of a read (spec 4.1, DESIGN §5), parsed and range-checked. Unknown `$` options
 * are refused so a typo never silently returns the wrong rows.
 */
export interface ReadOptions {
  filter?: Expr;
  orderby: OrderByItem[];
  expand: ExpandItem[];
  top: number;
  skip: number;
  count: boolean;
  search?: SearchNode;
  searchFields?: string[];
  /** Items an expanded collection shows when its own `$top` does not say (MAX_EXPAND_TOP). */
  expandTop: number;
}

export const DEFAULT_TOP = 60;

/** The `$` options a read accepts (anything else starting with `$` is a 400); the OpenAPI document lists them. */
export const READ_QUERY_OPTIONS = [
  '$filter',
  '$orderby',
  '$expand',
  '$top',
  '$skip',
  '$count',
  '$select',
  '$search',
  '$format',
] as const;

const KNOWN = new Set<string>(READ_QUERY_OPTIONS);

/** Digits as written, even past 2^53 (`String(1e20)` would say `1e+20`). */
const plain = (n: number) => n.toLocaleString('en', { useGrouping: false, maximumFractionDigits: 0 });

/** A count option's value; its limit (MAX_TOP, MAX_SKIP) is checked by the caller, so huge values name it. */
function nonNegativeInt(option: string, raw: string): number {
  if (!/^[0-9]+$/.test(raw.trim())) throw badRequest(`${option}: '${raw}' is not a non-negative integer`);
  return Number(raw.trim());
}

function checkTop(top: number, limits: ReadLimits): number {
  if (top > limits.maxTop) {
    throw badRequest(
      `$top: ${plain(top)} exceeds the limit of ${limits.maxTop} (MAX_TOP); page on with $skip or keyset paging`,
    );
  }
  return top;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  if (!Object.hasOwn(query, name)) return undefined;
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name}: given more than once`);
  if (!isStorableText(value)) throw badRequest(`${name}: holds U+0000 or an unpaired surrogate`);
  return value;
}

/**
 * `$skip` has a ceiling because skipped rows are still read; keyset paging costs one page whatever
 * the position (DESIGN §13).
 */
function checkSkip(option: string, skip: number, limits: ReadLimits): number {
  if (skip > limits.maxSkip) {
    throw badRequest(
      `${option}: ${plain(skip)} exceeds the limit of ${limits.maxSkip} (MAX_SKIP); page on with keyset paging instead: $filter=Id gt '<last Id of the page>' in the default order`,
    );
  }
  return skip;
}

/** How deep `items` nest: `A/B` counts two levels, as does `A($expand=B)`. */
function expandDepth(items: readonly ExpandItem[]): number {
  return Math.max(0, ...items.map((item) => item.path.length + expandDepth(item.options.expand ?? [])));
}

/** Navigation properties expanded at every level (`A/B` is two). */
function expansionCount(items: readonly ExpandItem[]): number {
  return items.reduce((n, item) => n + item.path.length + expansionCount(item.options.expand ?? []), 0);
}

/** The $expand limits of DESIGN §13, before any SQL is built. */
function checkExpand(items: ExpandItem[], limits: ReadLimits): ExpandItem[] {
  const depth = expandDepth(items);
  if (depth > limits.maxExpandDepth) {
    throw badRequest(`$expand: depth ${depth} exceeds the limit of ${limits.maxExpandDepth} (MAX_EXPAND_DEPTH)`);
  }
  const count = expansionCount(items);
  if (count > limits.maxExpansions) {
    throw badRequest(
      `$expand: ${count} expansions exceed the limit of ${limits.maxExpansions} in one request (MAX_EXPANSIONS)`,
    );
  }
  const visit = (list: readonly ExpandItem[]): void => {
    for (const item of list) {
      const { top, skip } = item.options;
      if (top !== undefined && top > limits.maxExpandTop) {
        throw badRequest(
          `$expand: $top=${top} inside '${item.path.join('/')}' exceeds the limit of ${limits.maxExpandTop} (MAX_EXPAND_TOP) at position ${item.span.start}`,
        );
      }
      if (skip !== undefined) checkSkip(`$expand: $skip inside '${item.path.join('/')}'`, skip, limits);
      visit(item.options.expand ?? []);
    }
  };
  visit(items);
  return items;
}

function parsing<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ODataSyntaxError) throw badRequest(err.message);
    throw err;
  }
}

/**
 * `limits` is the configuration's (maxTop plus `config.limits`); a bare number is a `$top` ceiling
 * with the other limits at their defaults.
 */
export function parseReadOptions(
  query: Record<string, unknown>,
  limitsOrMaxTop: ReadLimits | number = DEFAULT_READ_LIMITS,
): ReadOptions {
  const limits =
    typeof limitsOrMaxTop === 'number' ? { ...DEFAULT_READ_LIMITS, maxTop: limitsOrMaxTop } : limitsOrMaxTop;
  const nodes = limits.maxSyntaxNodes;
  for (const name of Object.keys(query)) {
    if (name.startsWith('$') && !KNOWN.has(name)) {
      throw badRequest(isStorableText(name) ? `unknown query option '${name}'` : 'an unknown query option');
    }
  }
  const format = single(query, '$format');
  if (format !== undefined && format !== 'json' && format !== 'application/json') {
    throw badRequest(`$format: only json is offered here, not '${format}'`);
  }
  const filter = single(query, '$filter');
  const orderby = single(query, '$orderby');
  const expand = single(query, '$expand');
  const top = single(query, '$top');
  const skip = single(query, '$skip');
  const count = single(query, '$count');
  const search = single(query, '$search');
  const searchFields = single(query, 'searchFields');
  single(query, '$select'); // accepted and ignored (spec 4.1)

  if (count !== undefined && count !== 'true' && count !== 'false') {
    throw badRequest(`$count: expected true or false, found '${count}'`);
  }
  return {
    filter: filter !== undefined && filter.trim() !== '' ? parsing(() => parseFilter(filter, nodes)) : undefined,
    orderby: orderby !== undefined && orderby.trim() !== '' ? parsing(() => parseOrderBy(orderby, nodes)) : [],
    expand:
      expand !== undefined && expand.trim() !== ''
        ? checkExpand(
            parsing(() => parseExpand(expand, nodes)),
            limits,
          )
        : [],
    // The default page never exceeds MAX_TOP either.
    top: top !== undefined ? checkTop(nonNegativeInt('$top', top), limits) : Math.min(DEFAULT_TOP, limits.maxTop),
    skip: skip !== undefined ? checkSkip('$skip', nonNegativeInt('$skip', skip), limits) : 0,
    count: count === 'true',
    search: search !== undefined && search.trim() !== '' ? parsing(() => parseSearch(search, nodes)) : undefined,
    searchFields:
      searchFields !== undefined
        ? searchFields
            .split(',')
            .map((f) => f.trim())
            .filter(Boolean)
        : undefined,
    expandTop: limits.maxExpandTop,
  };
}
