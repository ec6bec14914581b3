/**
 * Typed AST for the OData query options the API accepts ($filter, $orderby, $expand, $search).
 * The read plan (domain/queries/filter-plan.ts) consumes these shapes; spans let it point at the
 * offending text in a 400.
 */
import type { FilterFunction } from './filter-functions';

/** 0-based offsets into the option's text, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
}

export type LiteralType = 'string' | 'number' | 'boolean' | 'null' | 'date' | 'datetime';

export type ComparisonOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type BinaryOp = ComparisonOp | 'and' | 'or';

export type Expr =
  | {
      kind: 'literal';
      type: LiteralType;
      value: string | number | boolean | null;
      raw: string;
      span: Span;
    }
  /** Address/AddressLine, Id, c/Company/Id (a lambda variable stays the first segment). */
  | { kind: 'path'; segments: string[]; span: Span }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr; span: Span }
  | { kind: 'not'; operand: Expr; span: Span }
  | { kind: 'in'; left: Expr; list: Expr[]; span: Span }
  /** A function of FILTER_FUNCTIONS, with as many arguments as it takes. */
  | { kind: 'call'; name: FilterFunction; args: Expr[]; span: Span }
  /** `Companies/any()` has variable null and body null. */
  | {
      kind: 'lambda';
      op: 'any' | 'all';
      collection: string[];
      variable: string | null;
      body: Expr | null;
      span: Span;
    };

export type LiteralExpr = Extract<Expr, { kind: 'literal' }>;

export interface OrderByItem {
  path: string[];
  direction: 'asc' | 'desc';
  span: Span;
}

/** One item of `$select`: a property name or `*`, the path after it (`Notes/Text`), and where it was written. */
export interface SelectItem {
  name: string;
  /** The segments after `name`; empty when the item is a name alone. */
  path: string[];
  position: number;
}

/** A `$select` inside `$expand` as written: the root ignores it, `/odata` parses it (select-parser.ts). */
export interface SelectText {
  text: string;
  /** Offset of `text` in the whole `$expand`. */
  at: number;
}

/** Options inside `Nav( ... )`; `$select` is kept as text, ignored at the root. */
export interface ExpandOptions {
  select?: SelectText;
  expand?: ExpandItem[];
  filter?: Expr;
  orderby?: OrderByItem[];
  top?: number;
  skip?: number;
  count?: boolean;
}

/** `path` is usually one navigation segment; `A/B` is allowed. */
export interface ExpandItem {
  path: string[];
  options: ExpandOptions;
  span: Span;
}

export type SearchNode =
  | { kind: 'term'; text: string; phrase: boolean; field: string | null; span: Span }
  | { kind: 'not'; operand: SearchNode; span: Span }
  | { kind: 'and'; items: SearchNode[]; span: Span }
  | { kind: 'or'; items: SearchNode[]; span: Span };

export type SearchTerm = Extract<SearchNode, { kind: 'term' }>;
