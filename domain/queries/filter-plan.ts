import { FILTER_FUNCTIONS, type Expr, type FilterFunction, type LiteralExpr } from '../odata';
import { parseKey } from '../ids/id-codec';
import { badRequest } from '../errors/domain-error';
import type { CollectionField, ScalarField, ScalarKind } from '../entities';
import { acceptsBareIntegers, resolvePath, type RowSource } from './path-resolver';

/**
 * The plan stage of `$filter` and `$orderby` (and their forms inside `$expand`): every name is
 * resolved against the definitions and every literal type-checked against what it is compared
 * with, here, before any SQL exists. Every client error of a read is raised here (400 naming the
 * option, text and position); the SQL builders consume the plan and raise none. String functions
 * are case-sensitive, as in OData; `%` and `_` in a literal are plain characters.
 */

/** A client mistake found while planning a read: 400 naming the option, text and position. */
export function queryError(option: string, message: string, position?: number): Error {
  return badRequest(`${option}: ${message}${position === undefined ? '' : ` at position ${position}`}`);
}

/** A single relation to left-join on the way to a column (many-to-one: joins never multiply rows). */
export interface Hop {
  /** The path so far (`/Address/Country`): one join per path and scope. */
  key: string;
  /** The foreign key on the row joined from. */
  column: string;
  target: RowSource;
}

/**
 * A column reached from a scope: `level` 0 is the rows the filter or ordering reads; each lambda
 * adds a level whose variable names the collection row.
 */
export interface ColumnRef {
  level: number;
  hops: Hop[];
  column: string;
}

/** The collection a lambda ranges over, below the row at `level` (after `hops`). */
export interface CollectionRef {
  level: number;
  hops: Hop[];
  collection: CollectionField;
  target: RowSource;
}

/** The functions of FILTER_FUNCTIONS that take `T` and give `G`. */
type FunctionsGiving<G extends string, T extends string> = {
  [K in FilterFunction]: (typeof FILTER_FUNCTIONS)[K] extends { gives: G; takes: T } ? K : never;
}[FilterFunction];

export type SqlComparison = '=' | '<>' | '>' | '>=' | '<' | '<=';

/** A type-checked filter: what the SQL builder emits, one node for one piece of SQL. */
export type PlannedExpr =
  | { kind: 'column'; ref: ColumnRef }
  | { kind: 'param'; value: unknown; cast?: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'not'; operand: PlannedExpr }
  | { kind: 'logic'; op: 'and' | 'or'; left: PlannedExpr; right: PlannedExpr }
  | { kind: 'compare'; op: SqlComparison; left: PlannedExpr; right: PlannedExpr }
  | { kind: 'isNull'; negated: boolean; subject: PlannedExpr }
  | { kind: 'in'; subject: PlannedExpr; list: PlannedExpr[] }
  | { kind: 'like'; subject: PlannedExpr; pattern: string }
  | { kind: 'textMatch'; fn: FunctionsGiving<'condition', 'text'>; subject: PlannedExpr; other: PlannedExpr }
  | { kind: 'function'; fn: FunctionsGiving<'text' | 'integer', 'text'>; arg: PlannedExpr }
  | { kind: 'extract'; part: FunctionsGiving<'integer', 'temporal'>; arg: PlannedExpr; utc: boolean }
  | { kind: 'lambda'; op: 'any' | 'all'; collection: CollectionRef; body: PlannedExpr | null };

/** One `$orderby` item, resolved. */
export interface PlannedOrder {
  ref: ColumnRef;
  direction: 'asc' | 'desc';
}

/** An ordering: its items, and whether they already end on the key (else the key breaks ties). */
export interface PlannedOrdering {
  items: PlannedOrder[];
  /** No `$orderby` given: the builder puts its defaults (relevance, written order) first. */
  byDefault: boolean;
  ordersByKey: boolean;
}

/** `integer` and `number` compare with each other; literals are bound as the column's own type. */
type ValueType = 'string' | 'integer' | 'number' | 'date' | 'datetime' | 'boolean';

const NUMERIC: ReadonlySet<ValueType> = new Set(['integer', 'number']);
const TEMPORAL: ReadonlySet<ValueType> = new Set(['date', 'datetime']);

function compatible(a: ValueType, b: ValueType): boolean {
  return a === b || (NUMERIC.has(a) && NUMERIC.has(b)) || (TEMPORAL.has(a) && TEMPORAL.has(b));
}

/** An operand being checked: a typed expression, an Id, or a literal still waiting for its type. */
type Operand =
  | { kind: 'sql'; expr: PlannedExpr; type: ValueType }
  | { kind: 'id'; expr: PlannedExpr; typeName: string; acceptsBareIntegers: boolean }
  | { kind: 'literal'; lit: LiteralExpr };

/** Integer columns are 32-bit (DESIGN §13): a literal beyond them is a 400, not a database error. */
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

const OPS: Record<string, SqlComparison> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' };

function valueTypeOf(kind: ScalarKind): ValueType {
  switch (kind) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    default:
      return 'string';
  }
}

/** What a property path resolved to. */
type Resolved =
  | { kind: 'scalar'; ref: ColumnRef; field: ScalarField; name: string }
  /** An `Id` (the row's own or a relation's): compared by decoding the client's encoded value. */
  | { kind: 'id'; ref: ColumnRef; typeName: string; acceptsBareIntegers: boolean }
  | { kind: 'collection'; ref: CollectionRef; name: string };

/**
 * The rows a filter or ordering is evaluated against. Lambda bodies get a child scope whose
 * variable names the collection row; other paths there resolve against the parent.
 */
export class PlanScope {
  constructor(
    readonly source: RowSource,
    readonly option: string,
    readonly level = 0,
    readonly variable: string | null = null,
    readonly parent: PlanScope | null = null,
  ) {}

  resolve(segments: string[], position: number): Resolved {
    if (this.variable !== null) {
      if (segments[0] === this.variable) return this.resolveFrom(segments.slice(1), position);
      if (this.parent) return this.parent.resolve(segments, position);
    }
    return this.resolveFrom(segments, position);
  }

  private resolveFrom(segments: string[], position: number): Resolved {
    if (segments.length === 0) throw queryError(this.option, 'a lambda variable needs a property after it', position);
    const { steps, failure } = resolvePath(this.source, segments);
    const hops: Hop[] = [];
    let prefix = '';
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      const last = i === segments.length - 1;
      switch (step.kind) {
        case 'id':
          if (!last) throw queryError(this.option, `'Id' has no properties`, position);
          return {
            kind: 'id',
            ref: { level: this.level, hops, column: 'id' },
            typeName: step.on.def.name,
            acceptsBareIntegers: acceptsBareIntegers(step.on),
          };
        case 'field':
          if (!last) throw queryError(this.option, `'${step.name}' has no properties`, position);
          return {
            kind: 'scalar',
            ref: { level: this.level, hops, column: step.field.column },
            field: step.field,
            name: step.name,
          };
        case 'relation':
          // `Relation/Id` (and `Relation eq null`) need no join: the foreign key is the related key.
          if (last || (segments[i + 1] === 'Id' && i + 1 === segments.length - 1)) {
            return {
              kind: 'id',
              ref: { level: this.level, hops, column: step.relation.column },
              typeName: step.target.def.name,
              acceptsBareIntegers: acceptsBareIntegers(step.target),
            };
          }
          prefix = `${prefix}/${step.name}`;
          hops.push({ key: prefix, column: step.relation.column, target: step.target });
          continue;
        case 'collection':
          if (!last)
            throw queryError(
              this.option,
              `'${step.name}' is a collection: use ${step.name}/any(...) or ${step.name}/all(...)`,
              position,
            );
          return {
            kind: 'collection',
            ref: { level: this.level, hops, collection: step.collection, target: step.target },
            name: step.name,
          };
      }
    }
    if (failure) {
      throw queryError(
        this.option,
        `unknown property '${segments[failure.index]}' of ${failure.on.def.name}`,
        position,
      );
    }
    throw queryError(this.option, 'empty property path', position);
  }
}

/** Plans a whole filter against a root (or expanded-collection) source. */
export function planFilter(expr: Expr, source: RowSource, option = '$filter'): PlannedExpr {
  return new FilterPlanner(option).condition(expr, new PlanScope(source, option));
}

/**
 * `$orderby` items, resolved. Directions keep Postgres' default null placement so ordinary btree
 * indexes serve them; the builder adds the key as the final tie-breaker so pages are stable.
 */
export function planOrdering(
  items: readonly { path: string[]; direction: 'asc' | 'desc'; span: { start: number } }[],
  source: RowSource,
  option: string,
): PlannedOrdering {
  const scope = new PlanScope(source, option);
  const planned: PlannedOrder[] = [];
  for (const item of items) {
    const resolved = scope.resolve(item.path, item.span.start);
    if (resolved.kind === 'collection')
      throw queryError(option, `cannot order by the collection '${resolved.name}'`, item.span.start);
    planned.push({ ref: resolved.ref, direction: item.direction });
  }
  return {
    items: planned,
    byDefault: items.length === 0,
    ordersByKey: items.some((item) => item.path.length === 1 && item.path[0] === 'Id'),
  };
}

class FilterPlanner {
  constructor(private readonly option: string) {}

  condition(expr: Expr, scope: PlanScope): PlannedExpr {
    const out = this.operand(expr, scope);
    if (out.kind === 'literal' && out.lit.type === 'boolean') return { kind: 'boolean', value: out.lit.value === true };
    if (out.kind !== 'sql' || out.type !== 'boolean') {
      throw queryError(this.option, 'the expression must be a condition (true or false)', expr.span.start);
    }
    return out.expr;
  }

  private operand(expr: Expr, scope: PlanScope): Operand {
    const bool = (planned: PlannedExpr): Operand => ({ kind: 'sql', expr: planned, type: 'boolean' });
    switch (expr.kind) {
      case 'literal':
        return { kind: 'literal', lit: expr };
      case 'path':
        return this.pathOperand(scope.resolve(expr.segments, expr.span.start), expr.span.start);
      case 'not':
        return bool({ kind: 'not', operand: this.condition(expr.operand, scope) });
      case 'binary':
        if (expr.op === 'and' || expr.op === 'or') {
          const left = this.condition(expr.left, scope);
          const right = this.condition(expr.right, scope);
          return bool({ kind: 'logic', op: expr.op, left, right });
        }
        return bool(this.comparison(expr.op, expr.left, expr.right, scope, expr.span.start));
      case 'in':
        return bool(this.inList(expr.left, expr.list, scope, expr.span.start));
      case 'call':
        return this.call(expr.name, expr.args, scope);
      case 'lambda':
        return bool(this.lambda(expr, scope));
    }
  }

  private pathOperand(resolved: Resolved, position: number): Operand {
    switch (resolved.kind) {
      case 'scalar':
        if (resolved.field.kind === 'stringList') {
          throw queryError(this.option, `'${resolved.name}' is a list and cannot be compared`, position);
        }
        return { kind: 'sql', expr: { kind: 'column', ref: resolved.ref }, type: valueTypeOf(resolved.field.kind) };
      case 'id':
        return {
          kind: 'id',
          expr: { kind: 'column', ref: resolved.ref },
          typeName: resolved.typeName,
          acceptsBareIntegers: resolved.acceptsBareIntegers,
        };
      case 'collection':
        throw queryError(this.option, `'${resolved.name}' is a collection: use ${resolved.name}/any(...)`, position);
    }
  }

  private comparison(op: string, leftExpr: Expr, rightExpr: Expr, scope: PlanScope, position: number): PlannedExpr {
    let left = this.operand(leftExpr, scope);
    let right = this.operand(rightExpr, scope);
    // Keep the non-literal on the left; flip the operator to match.
    if (left.kind === 'literal' && right.kind !== 'literal') {
      [left, right] = [right, left];
      op = { gt: 'lt', lt: 'gt', ge: 'le', le: 'ge' }[op] ?? op;
    }
    if (right.kind === 'literal' && right.lit.type === 'null') {
      if (op !== 'eq' && op !== 'ne')
        throw queryError(this.option, `null can only be compared with eq or ne`, rightExpr.span.start);
      return { kind: 'isNull', negated: op !== 'eq', subject: this.bare(left, leftExpr) };
    }
    if (left.kind === 'id') return this.idComparison(op, left, [right], position, rightExpr.span.start);
    const leftPlanned = this.bare(left, leftExpr);
    const leftType = left.kind === 'sql' ? left.type : this.literalType(left.lit);
    const rightPlanned = this.coerce(right, leftType, rightExpr.span.start);
    if (leftType === 'boolean' && op !== 'eq' && op !== 'ne') {
      throw queryError(this.option, `conditions can only be compared with eq or ne`, position);
    }
    return { kind: 'compare', op: OPS[op]!, left: leftPlanned, right: rightPlanned };
  }

  private idComparison(
    op: string,
    id: Extract<Operand, { kind: 'id' }>,
    values: Operand[],
    position: number,
    valuePos: number,
  ): PlannedExpr {
    const ordering = op !== 'eq' && op !== 'ne';
    const keys: PlannedExpr[] = values.map((value) => {
      if (value.kind === 'id') return value.expr; // Id eq Relation/Id: compare keys directly
      if (
        value.kind !== 'literal' ||
        (value.lit.type !== 'string' && !(value.lit.type === 'number' && id.acceptsBareIntegers))
      ) {
        throw queryError(this.option, `an Id must be compared with a quoted encoded Id`, valuePos);
      }
      const key = parseKey(id.typeName, String(value.lit.value), id.acceptsBareIntegers);
      // Keyset paging (DESIGN §13): gt/ge/lt/le compare the integer keys Ids encode, so the
      // bound must be a real Id.
      if (key === null && ordering) {
        throw queryError(this.option, `${value.lit.raw} is not an Id of ${id.typeName}`, valuePos);
      }
      // An undecodable Id names no row: it matches nothing (eq) or everything (ne), never errors.
      return { kind: 'param', value: key ?? -1 };
    });
    if (keys.length === 1) return { kind: 'compare', op: OPS[op]!, left: id.expr, right: keys[0]! };
    return { kind: 'in', subject: id.expr, list: keys };
  }

  private inList(leftExpr: Expr, list: Expr[], scope: PlanScope, position: number): PlannedExpr {
    const left = this.operand(leftExpr, scope);
    const values = list.map((item) => this.operand(item, scope));
    if (values.length === 0) return { kind: 'boolean', value: false };
    if (left.kind === 'id') return this.idComparison('eq', left, values, position, list[0]!.span.start);
    const subject = this.bare(left, leftExpr);
    const type = left.kind === 'sql' ? left.type : this.literalType(left.lit);
    return { kind: 'in', subject, list: values.map((v, i) => this.coerce(v, type, list[i]!.span.start)) };
  }

  /** Names and arities were checked by the parser; here the types FILTER_FUNCTIONS gives. */
  private call(name: FilterFunction, args: Expr[], scope: PlanScope): Operand {
    const spec = FILTER_FUNCTIONS[name];
    if (spec.takes === 'temporal') {
      const operand = this.operand(args[0]!, scope);
      if (operand.kind !== 'sql' || (operand.type !== 'date' && operand.type !== 'datetime')) {
        throw queryError(this.option, `${name}() needs a date or date-time property`, args[0]!.span.start);
      }
      const part = name as FunctionsGiving<'integer', 'temporal'>;
      return {
        kind: 'sql',
        expr: { kind: 'extract', part, arg: operand.expr, utc: operand.type === 'datetime' },
        type: 'integer',
      };
    }
    const str = (i: number) => this.coerce(this.operand(args[i]!, scope), 'string', args[i]!.span.start, true);
    if (spec.gives === 'condition') {
      const fn = name as FunctionsGiving<'condition', 'text'>;
      const subject = str(0);
      const arg = args[1]!;
      if (arg.kind === 'literal' && arg.type === 'string') {
        const escaped = String(arg.value).replace(/[\\%_]/g, (c) => `\\${c}`);
        const pattern = fn === 'contains' ? `%${escaped}%` : fn === 'startswith' ? `${escaped}%` : `%${escaped}`;
        return { kind: 'sql', expr: { kind: 'like', subject, pattern }, type: 'boolean' };
      }
      return { kind: 'sql', expr: { kind: 'textMatch', fn, subject, other: str(1) }, type: 'boolean' };
    }
    const fn = name as FunctionsGiving<'text' | 'integer', 'text'>;
    return {
      kind: 'sql',
      expr: { kind: 'function', fn, arg: str(0) },
      type: spec.gives === 'text' ? 'string' : 'integer',
    };
  }

  private lambda(expr: Extract<Expr, { kind: 'lambda' }>, scope: PlanScope): PlannedExpr {
    const resolved = scope.resolve(expr.collection, expr.span.start);
    if (resolved.kind !== 'collection') {
      throw queryError(this.option, `'${expr.collection.join('/')}' is not a collection`, expr.span.start);
    }
    const child = new PlanScope(resolved.ref.target, this.option, scope.level + 1, expr.variable, scope);
    const body = expr.body ? this.condition(expr.body, child) : null;
    return { kind: 'lambda', op: expr.op, collection: resolved.ref, body };
  }

  /** A non-literal operand (literals on both sides are compared as bound values). */
  private bare(operand: Operand, expr: Expr): PlannedExpr {
    if (operand.kind === 'literal') return this.coerce(operand, this.literalType(operand.lit), expr.span.start);
    return operand.expr;
  }

  private literalType(lit: LiteralExpr): ValueType {
    if (lit.type === 'null') throw queryError(this.option, 'null cannot be compared with null', lit.span.start);
    return lit.type;
  }

  /** A literal bound as the type it is compared with; 400 when it cannot be that type. */
  private coerce(operand: Operand, type: ValueType, position: number, stringOnly = false): PlannedExpr {
    if (operand.kind === 'id') throw queryError(this.option, `an Id can only be compared with eq, ne or in`, position);
    if (operand.kind === 'sql') {
      if (stringOnly && operand.type !== 'string') throw queryError(this.option, 'expected a text value', position);
      if (!compatible(operand.type, type)) {
        throw queryError(this.option, `cannot compare a ${type} with a ${operand.type}`, position);
      }
      return operand.expr;
    }
    const lit = operand.lit;
    if (stringOnly && lit.type !== 'string')
      throw queryError(this.option, `expected a quoted string, found ${lit.raw}`, position);
    switch (type) {
      case 'string':
        if (lit.type !== 'string')
          throw queryError(this.option, `expected a quoted string, found ${lit.raw}`, position);
        return { kind: 'param', value: lit.value, cast: 'text' };
      case 'integer':
      case 'number':
        if (lit.type !== 'number' || !Number.isFinite(lit.value))
          throw queryError(this.option, `expected a number, found ${lit.raw}`, position);
        // Bound as the column's type so its index applies (int4 = int8 is index-compatible).
        if (type === 'number') return { kind: 'param', value: lit.value, cast: 'float8' };
        if (Number(lit.value) < INT32_MIN || Number(lit.value) > INT32_MAX) {
          throw queryError(this.option, `${lit.raw} is outside the range of an integer property`, position);
        }
        return { kind: 'param', value: lit.value, cast: Number.isInteger(lit.value) ? 'int8' : 'numeric' };
      case 'date':
        if (lit.type !== 'date')
          throw queryError(this.option, `expected a date (YYYY-MM-DD), found ${lit.raw}`, position);
        return { kind: 'param', value: lit.value, cast: 'date' };
      case 'datetime':
        if (lit.type !== 'datetime' && lit.type !== 'date') {
          throw queryError(this.option, `expected a date-time (YYYY-MM-DDThh:mm:ssZ), found ${lit.raw}`, position);
        }
        return { kind: 'param', value: lit.value, cast: 'timestamptz' };
      case 'boolean':
        if (lit.type !== 'boolean') throw queryError(this.option, `expected true or false, found ${lit.raw}`, position);
        return { kind: 'boolean', value: lit.value === true };
    }
  }
}
