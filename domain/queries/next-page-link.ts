import { parseReadOptions, type ReadOptions } from './read-options';
import type { ReadLimits } from './read-limits';
import type { Expr } from '../odata/ast';

/**
 * The address of the page after a collection page that has one (the API sends it as
 * `Link: <…>; rel="next"`, RFC 8288, DESIGN §13, §15). In the default order (by key) the link pages by keyset — the read's own `$filter` and
 * `Id gt '<last Id of this page>'` — which costs one page at any depth; in any other order it
 * pages by `$skip`. A link is only ever given when the read it names passes the same limits this
 * one did (MAX_SKIP, MAX_SYNTAX_NODES), so following it never answers 400.
 */

export interface NextPageFacts {
  /** The entity route (`Schemes`). */
  route: string;
  /** The query options as received (the `simple` parser's object). */
  query: Record<string, unknown>;
  options: ReadOptions;
  /** The encoded Id of the last row of this page. */
  lastId: string;
  limits: ReadLimits;
}

/** `$` and the OData punctuation stay readable; everything else as encodeURIComponent says. */
const encode = (text: string) => encodeURIComponent(text).replace(/%24/g, '$').replace(/%2C/g, ',');

function queryString(query: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one === 'string') parts.push(`${encode(name)}=${encode(one)}`);
    }
  }
  return parts.join('&');
}

/** Whether the rows are in key order, so `Id gt` continues exactly where this page ended. */
function inKeyOrder(options: ReadOptions): boolean {
  return options.orderby.length === 0 && options.search === undefined;
}

/** `Id gt '…'`: the cursor a keyset link adds. */
const isCursor = (expr: Expr): boolean =>
  expr.kind === 'binary' &&
  expr.op === 'gt' &&
  expr.left.kind === 'path' &&
  expr.left.segments.length === 1 &&
  expr.left.segments[0] === 'Id' &&
  expr.right.kind === 'literal' &&
  expr.right.type === 'string';

/**
 * The read's own filter without a trailing cursor: a page reached by a keyset link moves the
 * cursor instead of adding another, so the filter does not grow page by page. Dropping the old
 * cursor is exact: every row of this page is past it, so the new one implies it.
 */
function filterBeforeCursor(text: string, expr: Expr | undefined): string | undefined {
  if (!expr || isCursor(expr)) return undefined;
  // `and` is left-associative: the left operand's text (parentheses included) stands as it is.
  if (expr.kind === 'binary' && expr.op === 'and' && isCursor(expr.right)) {
    return text.slice(expr.left.span.start, expr.left.span.end);
  }
  return `(${text})`;
}

function keysetQuery({ query, options, lastId }: NextPageFacts): Record<string, unknown> {
  const { $skip: _skip, $count: _count, $filter: filter, ...rest } = query;
  const after = `Id gt '${lastId}'`;
  const own = typeof filter === 'string' ? filterBeforeCursor(filter, options.filter) : undefined;
  // `$count` is left out: after the cursor it would count only the rows still to come.
  return { ...rest, $filter: own ? `${own} and ${after}` : after };
}

function skipQuery({ query, options }: NextPageFacts): Record<string, unknown> {
  return { ...query, $skip: String(options.skip + options.top) };
}

/** The address (`/Schemes?…`) of the page after this one, or undefined when no acceptable one exists. */
export function nextPageAddress(facts: NextPageFacts): string | undefined {
  if (facts.options.top === 0) return undefined;
  const candidate = inKeyOrder(facts.options) ? keysetQuery(facts) : skipQuery(facts);
  try {
    parseReadOptions(candidate, facts.limits);
  } catch {
    // Past MAX_SKIP in a non-key order, or a filter at MAX_SYNTAX_NODES: no link rather than a 400.
    return undefined;
  }
  return `/${facts.route}?${queryString(candidate)}`;
}
