import { ODataSyntaxError, parseExpand, parseFilter, parseOrderBy, parseSearch } from '../odata';
import type { Expr, ExpandItem, OrderByItem, SearchNode } from '../odata';
import { badRequest } from '../errors/domain-error';

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
}

export const DEFAULT_TOP = 60;

const KNOWN = new Set(['$filter', '$orderby', '$expand', '$top', '$skip', '$count', '$select', '$search', '$format']);

function nonNegativeInt(option: string, raw: string, max?: number): number {
  if (!/^[0-9]+$/.test(raw.trim())) throw badRequest(`${option}: '${raw}' is not a non-negative integer`);
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n)) throw badRequest(`${option}: '${raw}' is too large`);
  if (max !== undefined && n > max) throw badRequest(`${option}: ${n} exceeds the maximum of ${max}`);
  return n;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name}: given more than once`);
  return value;
}

function parsing<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ODataSyntaxError) throw badRequest(err.message);
    throw err;
  }
}

export function parseReadOptions(query: Record<string, unknown>, maxTop: number): ReadOptions {
  for (const name of Object.keys(query)) {
    if (name.startsWith('$') && !KNOWN.has(name)) throw badRequest(`unknown query option '${name}'`);
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
    filter: filter !== undefined && filter.trim() !== '' ? parsing(() => parseFilter(filter)) : undefined,
    orderby: orderby !== undefined && orderby.trim() !== '' ? parsing(() => parseOrderBy(orderby)) : [],
    expand: expand !== undefined && expand.trim() !== '' ? parsing(() => parseExpand(expand)) : [],
    top: top !== undefined ? nonNegativeInt('$top', top, maxTop) : DEFAULT_TOP,
    skip: skip !== undefined ? nonNegativeInt('$skip', skip) : 0,
    count: count === 'true',
    search: search !== undefined && search.trim() !== '' ? parsing(() => parseSearch(search)) : undefined,
    searchFields:
      searchFields !== undefined
        ? searchFields
            .split(',')
            .map((f) => f.trim())
            .filter(Boolean)
        : undefined,
  };
}
