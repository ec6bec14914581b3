import type { ColumnRef, Hop, PlannedExpr, PlannedOrdering } from '../../domain/queries/filter-plan';
import type { RowSource } from '../../domain/queries/path-resolver';
import type { SqlBuilder } from './sql-builder';

/**
 * The rows a planned filter or ordering is emitted against, with the left joins its paths need
 * (one per path, shared by every reference). A lambda body's scope is a child (one level down)
 * whose joins go into its own subquery. Everything here was resolved by the plan: nothing fails.
 */
export class EntityScope {
  private readonly joins = new Map<string, string>();
  readonly joinSql: string[] = [];
  readonly level: number;

  constructor(
    readonly source: RowSource,
    readonly alias: string,
    readonly builder: SqlBuilder,
    readonly parent: EntityScope | null = null,
  ) {
    this.level = parent ? parent.level + 1 : 0;
  }

  /** The alias of the row a reference starts from after its joins. */
  rowAlias(level: number, hops: readonly Hop[]): string {
    if (level < this.level) {
      if (!this.parent) throw new Error(`no scope at level ${level}`);
      return this.parent.rowAlias(level, hops);
    }
    let alias = this.alias;
    for (const hop of hops) alias = this.join(hop, alias);
    return alias;
  }

  columnSql(ref: ColumnRef): string {
    return `${this.rowAlias(ref.level, ref.hops)}.${ref.column}`;
  }

  private join(hop: Hop, fromAlias: string): string {
    const existing = this.joins.get(hop.key);
    if (existing) return existing;
    const alias = this.builder.alias();
    this.joins.set(hop.key, alias);
    this.joinSql.push(`left join ${hop.target.def.table} ${alias} on ${alias}.id = ${fromAlias}.${hop.column}`);
    return alias;
  }
}

/** The SQL of the text functions of FILTER_FUNCTIONS (domain/odata/filter-functions.ts). */
const SQL_FUNCTION = { tolower: 'lower', toupper: 'upper', trim: 'btrim', length: 'char_length' } as const;

/**
 * A planned filter as a SQL boolean, its literals bound as parameters.
 *
 * Comparisons follow OData's null rules (OData 4.01 Part 2 §5.1.1.1), not SQL's: a comparison with
 * null on one side is false (`eq`, `gt`, `in`, …) or true (`ne`), never unknown, so `TotalUnits ne 5`
 * includes rows without TotalUnits and `not (TotalUnits gt 5)` does too. Where nothing negates a
 * comparison, SQL's unknown already acts as false in WHERE, so `x = $1` stays as it is (an index can
 * answer it); under `not` (`negated`) it becomes `(x = $1) is true`. `ne` is `is distinct from`, and
 * `eq` between two properties `is not distinct from` (null eq null is true). Boolean properties and
 * the string functions keep SQL's three values: their null is OData's null, which `not` keeps null.
 */
export function filterSql(expr: PlannedExpr, scope: EntityScope, negated = false): string {
  const sql = (e: PlannedExpr) => filterSql(e, scope, negated);
  const twoValued = (condition: string) => (negated ? `(${condition}) is true` : condition);
  switch (expr.kind) {
    case 'column':
      return scope.columnSql(expr.ref);
    case 'param':
      return scope.builder.param(expr.value, expr.cast);
    case 'boolean':
      return expr.value ? 'true' : 'false';
    case 'not':
      return `not (${filterSql(expr.operand, scope, !negated)})`;
    case 'logic':
      return `(${sql(expr.left)} ${expr.op} ${sql(expr.right)})`;
    case 'compare': {
      const [left, right] = [sql(expr.left), sql(expr.right)];
      if (expr.op === '<>') return `${left} is distinct from ${right}`;
      if (expr.op === '=' && expr.right.kind !== 'param') return `${left} is not distinct from ${right}`;
      return twoValued(`${left} ${expr.op} ${right}`);
    }
    case 'isNull':
      return `${sql(expr.subject)} is ${expr.negated ? 'not ' : ''}null`;
    case 'in': {
      const subject = sql(expr.subject);
      return twoValued(`${subject} in (${expr.list.map(sql).join(', ')})`);
    }
    case 'like': {
      const subject = sql(expr.subject);
      return `${subject} like ${scope.builder.param(expr.pattern)}`;
    }
    case 'textMatch': {
      const subject = sql(expr.subject);
      if (expr.fn === 'contains') return `strpos(${subject}, ${sql(expr.other)}) > 0`;
      const side = expr.fn === 'startswith' ? 'left' : 'right';
      const length = `char_length(${sql(expr.other)})`;
      return `${side}(${subject}, ${length}) = ${sql(expr.other)}`;
    }
    case 'function':
      return `${SQL_FUNCTION[expr.fn]}(${sql(expr.arg)})`;
    case 'extract': {
      const arg = sql(expr.arg);
      return `extract(${expr.part} from ${expr.utc ? `(${arg} at time zone 'UTC')` : arg})::int`;
    }
    case 'lambda': {
      const { collection } = expr;
      const parentAlias = scope.rowAlias(collection.level, collection.hops);
      const alias = scope.builder.alias();
      const child = new EntityScope(collection.target, alias, scope.builder, scope);
      const body = expr.body ? filterSql(expr.body, child) : 'true';
      const from = `from ${collection.target.def.table} ${alias} ${child.joinSql.join(' ')} where ${alias}.${collection.collection.foreignKey} = ${parentAlias}.id`;
      if (expr.op === 'any') return `exists (select 1 ${from} and ${body})`;
      // A member whose condition is unknown (a null compared) does not satisfy `all` either.
      return `not exists (select 1 ${from} and (${body}) is not true)`;
    }
  }
}

/**
 * ORDER BY of a planned ordering: its items, or `defaults` when the client gave none, then the
 * key as the final tie-breaker so pages are stable. The key goes the way the last item goes: one
 * `(column, id)` index then serves `X asc` forwards and `X desc` backwards (issue 27), where a key
 * always ascending left every `desc` (and its nulls, first) to a sort.
 */
export function orderSql(ordering: PlannedOrdering, scope: EntityScope, defaults: readonly string[] = []): string {
  const parts = ordering.items.map((item) => `${scope.columnSql(item.ref)} ${item.direction}`);
  if (ordering.byDefault) parts.push(...defaults);
  const keyDirection = ordering.items.at(-1)?.direction === 'desc' ? ' desc' : '';
  if (!ordering.ordersByKey) parts.push(`${scope.alias}.id${keyDirection}`);
  return parts.join(', ');
}
