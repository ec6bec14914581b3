/**
 * The `$filter` functions (DESIGN §5): the one table the parser (names, arity) and the read plan
 * (what each takes and gives) both read. Adding a function here is adding it everywhere but its
 * SQL (db/query/entity-scope.ts `filterSql`).
 */
export const FILTER_FUNCTIONS = {
  contains: { arity: 2, takes: 'text', gives: 'condition' },
  startswith: { arity: 2, takes: 'text', gives: 'condition' },
  endswith: { arity: 2, takes: 'text', gives: 'condition' },
  tolower: { arity: 1, takes: 'text', gives: 'text' },
  toupper: { arity: 1, takes: 'text', gives: 'text' },
  trim: { arity: 1, takes: 'text', gives: 'text' },
  length: { arity: 1, takes: 'text', gives: 'integer' },
  year: { arity: 1, takes: 'temporal', gives: 'integer' },
  month: { arity: 1, takes: 'temporal', gives: 'integer' },
  day: { arity: 1, takes: 'temporal', gives: 'integer' },
} as const;

export type FilterFunction = keyof typeof FILTER_FUNCTIONS;

/** A function by a client-given name: own properties only (`constructor` is no function). */
export function filterFunction(name: string): FilterFunction | undefined {
  return Object.hasOwn(FILTER_FUNCTIONS, name) ? (name as FilterFunction) : undefined;
}
