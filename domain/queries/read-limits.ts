/**
 * The read-side limits of DESIGN §13, checked while a read's options are parsed, before any SQL.
 * Each refusal is a 400 whose message names the limit's setting.
 */
export interface ReadLimits {
  maxTop: number;
  /** Nesting of `$expand`, counting `A($expand=B)` and `A/B` alike (MAX_EXPAND_DEPTH). */
  maxExpandDepth: number;
  /** Expanded navigation properties in one request, all levels together (MAX_EXPANSIONS). */
  maxExpansions: number;
  /** Items of an expanded collection: the default `$top` inside it and its largest (MAX_EXPAND_TOP). */
  maxExpandTop: number;
  /** Syntax nodes of one `$filter`, `$orderby`, `$expand` or `$search` (MAX_SYNTAX_NODES). */
  maxSyntaxNodes: number;
  /** Largest `$skip` (MAX_SKIP); beyond it keyset paging (`$filter=Id gt '…'`) is the way on. */
  maxSkip: number;
  /**
   * Rows a `$count` with a filter or a search counts (COUNT_LIMIT): past it the count stops and
   * says so (a lower bound, as search engines and Dataverse answer), so its cost is bounded
   * whatever the table holds. Not a refusal; a whole set's count is exact at any size.
   */
  countLimit: number;
  /**
   * The same for a `$search` (SEARCH_COUNT_LIMIT): a full-text match costs ~10× a filtered row to
   * count (1,001 `park` matches 12-18 ms at 1.1M schemes, 10,001 55-115 ms), so it stops sooner.
   */
  searchCountLimit: number;
}

/** What a `$count` may count (COUNT_LIMIT, SEARCH_COUNT_LIMIT). */
export type CountLimits = Pick<ReadLimits, 'countLimit' | 'searchCountLimit'>;

/** DESIGN §13 defaults, for callers without a loaded configuration (tests of parsing alone). */
export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxTop: 1000,
  maxExpandDepth: 3,
  maxExpansions: 10,
  maxExpandTop: 100,
  maxSyntaxNodes: 100,
  maxSkip: 100_000,
  countLimit: 10_000,
  searchCountLimit: 1000,
};
