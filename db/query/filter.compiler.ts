import type { Expr, LiteralExpr } from '../../domain/odata';
import { parseKey } from '../../domain/ids/id-codec';
import type { ScalarKind } from '../../domain/entities';
import { EntityScope, type Resolved } from './entity-scope';
import { SqlContext, queryError } from './sql-context';

/**
 * Compiles a `$filter` syntax tree to a SQL boolean over an EntityScope. Every field is checked
 * against the entity definition, every literal is type-checked against what it is compared with
 * and bound as a parameter. String functions are case-sensitive, as in OData; `%` and `_` in a
 * literal are plain characters.
 */

/** `integer` and `number` compare with each other; literals are bound as the column's own type. */
type ValueType = 'string' | 'integer' | 'number' | 'date' | 'datetime' | 'boolean';

const NUMERIC: ReadonlySet<ValueType> = new Set(['integer', 'number']);
const TEMPORAL: ReadonlySet<ValueType> = new Set(['date', 'datetime']);

function compatible(a: ValueType, b: ValueType): boolean {
  return a === b || (NUMERIC.has(a) && NUMERIC.has(b)) || (TEMPORAL.has(a) && TEMPORAL.has(b));
}

/** A compiled operand: SQL plus what it holds, or a literal still waiting for its type. */
type Operand =
  | { kind: 'sql'; sql: string; type: ValueType }
  | { kind: 'id'; sql: string; typeName: string; acceptsBareIntegers: boolean }
  | { kind: 'literal'; lit: LiteralExpr };

/** Integer columns are 32-bit (DESIGN §13): a literal beyond them is a 400, not a database error. */
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

const OPS: Record<string, string> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' };

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

export class FilterCompiler {
  private constructor(
    private readonly ctx: SqlContext,
    private readonly option: string,
  ) {}

  /** Compiles a whole filter against a root (or collection-child) scope. */
  static compile(expr: Expr, scope: EntityScope, option = '$filter'): string {
    return new FilterCompiler(scope.ctx, option).compile(expr, scope);
  }

  compile(expr: Expr, scope: EntityScope): string {
    const out = this.operand(expr, scope);
    if (out.kind === 'literal' && out.lit.type === 'boolean') return out.lit.value ? 'true' : 'false';
    if (out.kind !== 'sql' || out.type !== 'boolean') {
      throw queryError(this.option, 'the expression must be a condition (true or false)', expr.span.start);
    }
    return out.sql;
  }

  private operand(expr: Expr, scope: EntityScope): Operand {
    switch (expr.kind) {
      case 'literal':
        return { kind: 'literal', lit: expr };
      case 'path':
        return this.pathOperand(scope.resolve(expr.segments, expr.span.start), expr.span.start);
      case 'not':
        return { kind: 'sql', sql: `not (${this.compile(expr.operand, scope)})`, type: 'boolean' };
      case 'binary':
        if (expr.op === 'and' || expr.op === 'or') {
          const left = this.compile(expr.left, scope);
          const right = this.compile(expr.right, scope);
          return { kind: 'sql', sql: `(${left} ${expr.op} ${right})`, type: 'boolean' };
        }
        return {
          kind: 'sql',
          sql: this.comparison(expr.op, expr.left, expr.right, scope, expr.span.start),
          type: 'boolean',
        };
      case 'in':
        return { kind: 'sql', sql: this.inList(expr.left, expr.list, scope, expr.span.start), type: 'boolean' };
      case 'call':
        return this.call(expr.name, expr.args, scope);
      case 'lambda':
        return { kind: 'sql', sql: this.lambda(expr, scope), type: 'boolean' };
    }
  }

  private pathOperand(resolved: Resolved, position: number): Operand {
    switch (resolved.kind) {
      case 'scalar':
        if (resolved.field.kind === 'stringList') {
          throw queryError(this.option, `'${resolved.name}' is a list and cannot be compared`, position);
        }
        return { kind: 'sql', sql: resolved.sql, type: valueTypeOf(resolved.field.kind) };
      case 'id':
        return resolved;
      case 'collection':
        throw queryError(this.option, `'${resolved.name}' is a collection: use ${resolved.name}/any(...)`, position);
    }
  }

  private comparison(op: string, leftExpr: Expr, rightExpr: Expr, scope: EntityScope, position: number): string {
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
      const sql = this.bareSql(left, leftExpr);
      return `${sql} is ${op === 'eq' ? '' : 'not '}null`;
    }
    if (left.kind === 'id') return this.idComparison(op, left, [right], position, rightExpr.span.start);
    const leftSql = this.bareSql(left, leftExpr);
    const leftType = left.kind === 'sql' ? left.type : this.literalType(left.lit);
    const rightSql = this.coerce(right, leftType, rightExpr.span.start);
    if (leftType === 'boolean' && op !== 'eq' && op !== 'ne') {
      throw queryError(this.option, `conditions can only be compared with eq or ne`, position);
    }
    return `${leftSql} ${OPS[op]} ${rightSql}`;
  }

  private idComparison(
    op: string,
    id: Extract<Operand, { kind: 'id' }>,
    values: Operand[],
    position: number,
    valuePos: number,
  ): string {
    const ordering = op !== 'eq' && op !== 'ne';
    const keys = values.map((value) => {
      if (value.kind === 'id') return null; // Id eq Relation/Id: compare keys directly
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
      return key ?? -1;
    });
    const sqls = keys.map((key, i) => (key === null ? (values[i] as { sql: string }).sql : `${this.ctxParam(key)}`));
    if (sqls.length === 1) return `${id.sql} ${OPS[op]} ${sqls[0]}`;
    return `${id.sql} in (${sqls.join(', ')})`;
  }

  private ctxParam(value: unknown, cast?: string): string {
    return this.ctx.param(value, cast);
  }

  private inList(leftExpr: Expr, list: Expr[], scope: EntityScope, position: number): string {
    const left = this.operand(leftExpr, scope);
    const values = list.map((item) => this.operand(item, scope));
    if (values.length === 0) return 'false';
    if (left.kind === 'id') return this.idComparison('eq', left, values, position, list[0]!.span.start);
    const leftSql = this.bareSql(left, leftExpr);
    const type = left.kind === 'sql' ? left.type : this.literalType(left.lit);
    const sqls = values.map((v, i) => this.coerce(v, type, list[i]!.span.start));
    return `${leftSql} in (${sqls.join(', ')})`;
  }

  /** Names and arities were checked by the parser (FUNCTION_ARITY); here only types and SQL. */
  private call(name: string, args: Expr[], scope: EntityScope): Operand {
    const str = (i: number) => this.coerce(this.operand(args[i]!, scope), 'string', args[i]!.span.start, true);
    switch (name) {
      case 'contains':
      case 'startswith':
      case 'endswith': {
        const subject = str(0);
        const arg = args[1]!;
        if (arg.kind === 'literal' && arg.type === 'string') {
          const escaped = String(arg.value).replace(/[\\%_]/g, (c) => `\\${c}`);
          const pattern = name === 'contains' ? `%${escaped}%` : name === 'startswith' ? `${escaped}%` : `%${escaped}`;
          return { kind: 'sql', sql: `${subject} like ${this.ctxParam(pattern)}`, type: 'boolean' };
        }
        const other = str(1);
        const sql =
          name === 'contains'
            ? `strpos(${subject}, ${other}) > 0`
            : name === 'startswith'
              ? `left(${subject}, char_length(${other})) = ${other}`
              : `right(${subject}, char_length(${other})) = ${other}`;
        return { kind: 'sql', sql, type: 'boolean' };
      }
      case 'tolower':
        return { kind: 'sql', sql: `lower(${str(0)})`, type: 'string' };
      case 'toupper':
        return { kind: 'sql', sql: `upper(${str(0)})`, type: 'string' };
      case 'trim':
        return { kind: 'sql', sql: `btrim(${str(0)})`, type: 'string' };
      case 'length':
        return { kind: 'sql', sql: `char_length(${str(0)})`, type: 'integer' };
      case 'year':
      case 'month':
      case 'day': {
        const operand = this.operand(args[0]!, scope);
        if (operand.kind !== 'sql' || (operand.type !== 'date' && operand.type !== 'datetime')) {
          throw queryError(this.option, `${name}() needs a date or date-time property`, args[0]!.span.start);
        }
        const sql = operand.type === 'datetime' ? `(${operand.sql} at time zone 'UTC')` : operand.sql;
        return { kind: 'sql', sql: `extract(${name} from ${sql})::int`, type: 'integer' };
      }
      default:
        // The parser admits only the functions it knows: reaching this is a bug, not a client error.
        throw new Error(`filter function '${name}' has no SQL`);
    }
  }

  private lambda(expr: Extract<Expr, { kind: 'lambda' }>, scope: EntityScope): string {
    const resolved = scope.resolve(expr.collection, expr.span.start);
    if (resolved.kind !== 'collection') {
      throw queryError(this.option, `'${expr.collection.join('/')}' is not a collection`, expr.span.start);
    }
    const alias = scope.ctx.alias();
    const child = new EntityScope(resolved.source, alias, scope.ctx, this.option, expr.variable, scope);
    const body = expr.body ? this.compile(expr.body, child) : 'true';
    const from = `from ${resolved.source.def.table} ${alias} ${child.joinSql.join(' ')} where ${alias}.${resolved.collection.foreignKey} = ${resolved.parentAlias}.id`;
    if (expr.op === 'any') return `exists (select 1 ${from} and ${body})`;
    // A member whose condition is unknown (a null compared) does not satisfy `all` either.
    return `not exists (select 1 ${from} and (${body}) is not true)`;
  }

  /** SQL of a non-literal operand (literals on both sides are compared as bound values). */
  private bareSql(operand: Operand, expr: Expr): string {
    if (operand.kind === 'literal') return this.coerce(operand, this.literalType(operand.lit), expr.span.start);
    return operand.sql;
  }

  private literalType(lit: LiteralExpr): ValueType {
    if (lit.type === 'null') throw queryError(this.option, 'null cannot be compared with null', lit.span.start);
    return lit.type;
  }

  /** Binds a literal as the type it is compared with; 400 when it cannot be that type. */
  private coerce(operand: Operand, type: ValueType, position: number, stringOnly = false): string {
    if (operand.kind === 'id') throw queryError(this.option, `an Id can only be compared with eq, ne or in`, position);
    if (operand.kind === 'sql') {
      if (stringOnly && operand.type !== 'string') throw queryError(this.option, 'expected a text value', position);
      if (!compatible(operand.type, type)) {
        throw queryError(this.option, `cannot compare a ${type} with a ${operand.type}`, position);
      }
      return operand.sql;
    }
    const lit = operand.lit;
    if (stringOnly && lit.type !== 'string')
      throw queryError(this.option, `expected a quoted string, found ${lit.raw}`, position);
    switch (type) {
      case 'string':
        if (lit.type !== 'string')
          throw queryError(this.option, `expected a quoted string, found ${lit.raw}`, position);
        return this.ctxParam(lit.value, 'text');
      case 'integer':
      case 'number':
        if (lit.type !== 'number' || !Number.isFinite(lit.value))
          throw queryError(this.option, `expected a number, found ${lit.raw}`, position);
        // Bound as the column's type so its index applies (int4 = int8 is index-compatible).
        if (type === 'number') return this.ctxParam(lit.value, 'float8');
        if (Number(lit.value) < INT32_MIN || Number(lit.value) > INT32_MAX) {
          throw queryError(this.option, `${lit.raw} is outside the range of an integer property`, position);
        }
        return this.ctxParam(lit.value, Number.isInteger(lit.value) ? 'int8' : 'numeric');
      case 'date':
        if (lit.type !== 'date')
          throw queryError(this.option, `expected a date (YYYY-MM-DD), found ${lit.raw}`, position);
        return this.ctxParam(lit.value, 'date');
      case 'datetime':
        if (lit.type !== 'datetime' && lit.type !== 'date') {
          throw queryError(this.option, `expected a date-time (YYYY-MM-DDThh:mm:ssZ), found ${lit.raw}`, position);
        }
        return this.ctxParam(lit.value, 'timestamptz');
      case 'boolean':
        if (lit.type !== 'boolean') throw queryError(this.option, `expected true or false, found ${lit.raw}`, position);
        return lit.value ? 'true' : 'false';
    }
  }
}
