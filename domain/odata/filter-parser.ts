/**
 * $filter: recursive descent over the precedence levels the API documents,
 * `or` < `and` < `not` < comparison (`eq ne gt ge lt le`, `in`) < primary.
 * Comparisons do not chain (`A eq B eq C` is an error), which catches typos early.
 */
import { BinaryOp, ComparisonOp, Expr, LiteralExpr } from './ast';
import { FILTER_FUNCTIONS, filterFunction } from './filter-functions';
import { isKeyword, isPunct, ParseContext } from './parse-context';
import { Token } from './query-lexer';

const COMPARISON_OPS: ReadonlySet<string> = new Set<ComparisonOp>(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);

/** Words that cannot start an operand, so `Name eq and` fails here instead of naming a field "and". */
const RESERVED: ReadonlySet<string> = new Set([...COMPARISON_OPS, 'and', 'or', 'not', 'in']);

export function parseFilter(text: string, maxNodes?: number): Expr {
  const ctx = new ParseContext(text, '$filter', maxNodes);
  const expr = parseBooleanExpression(ctx);
  ctx.expectEnd();
  return expr;
}

/**
 * Parses one expression and stops at the first token that cannot continue it, so $expand can embed
 * it and then look for `;` or `)`.
 */
export function parseBooleanExpression(ctx: ParseContext): Expr {
  return parseOr(ctx);
}

function binary(op: BinaryOp, left: Expr, right: Expr): Expr {
  return { kind: 'binary', op, left, right, span: { start: left.span.start, end: right.span.end } };
}

function parseOr(ctx: ParseContext): Expr {
  let left = parseAnd(ctx);
  while (isKeyword(ctx.peek(), 'or')) {
    ctx.next();
    left = binary('or', left, parseAnd(ctx));
  }
  return left;
}

function parseAnd(ctx: ParseContext): Expr {
  let left = parseNot(ctx);
  while (isKeyword(ctx.peek(), 'and')) {
    ctx.next();
    left = binary('and', left, parseNot(ctx));
  }
  return left;
}

function parseNot(ctx: ParseContext): Expr {
  const token = ctx.peek();
  if (!isKeyword(token, 'not')) return parseComparison(ctx);
  ctx.next();
  const operand = ctx.nested(token, () => parseNot(ctx));
  return { kind: 'not', operand, span: { start: token.start, end: operand.span.end } };
}

function parseComparison(ctx: ParseContext): Expr {
  const left = parsePrimary(ctx);
  const operator = ctx.peek();
  if (operator.kind !== 'identifier') return left;
  if (COMPARISON_OPS.has(operator.text)) {
    ctx.next();
    return binary(operator.text as ComparisonOp, left, parsePrimary(ctx));
  }
  if (operator.text === 'in') {
    ctx.next();
    const open = ctx.expect('(');
    const list = ctx.nested(open, () => parseCommaSeparated(ctx, () => parsePrimary(ctx)));
    const close = ctx.expect(')');
    return { kind: 'in', left, list, span: { start: left.span.start, end: close.end } };
  }
  return left;
}

function parseCommaSeparated<T>(ctx: ParseContext, parseItem: () => T): T[] {
  const items = [parseItem()];
  while (ctx.accept(',')) items.push(parseItem());
  return items;
}

function parsePrimary(ctx: ParseContext): Expr {
  const token = ctx.peek();
  switch (token.kind) {
    case 'string':
      ctx.next();
      return literal(token, 'string', token.value);
    case 'number':
      ctx.next();
      return literal(token, 'number', token.value);
    case 'date':
    case 'datetime':
      ctx.next();
      return literal(token, token.kind, token.text);
    case 'punct':
      if (token.text === '(') return parseParenthesized(ctx);
      break;
    case 'identifier':
      return parseIdentifierExpression(ctx, token);
    default:
      break;
  }
  throw ctx.expected('an expression', token);
}

function literal(token: Token, type: LiteralExpr['type'], value: LiteralExpr['value']): LiteralExpr {
  return { kind: 'literal', type, value, raw: token.text, span: { start: token.start, end: token.end } };
}

/** The span is widened to the parentheses so errors about the group point at all of it. */
function parseParenthesized(ctx: ParseContext): Expr {
  const open = ctx.next();
  const inner = ctx.nested(open, () => parseOr(ctx));
  const close = ctx.expect(')');
  return { ...inner, span: { start: open.start, end: close.end } };
}

function parseIdentifierExpression(ctx: ParseContext, token: Token): Expr {
  switch (token.text) {
    case 'true':
    case 'false':
      ctx.next();
      return literal(token, 'boolean', token.text === 'true');
    case 'null':
      ctx.next();
      return literal(token, 'null', null);
    default:
      break;
  }
  if (RESERVED.has(token.text)) throw ctx.expected('an expression', token);
  if (isPunct(ctx.peek(1), '(')) return parseCall(ctx);
  return parsePathOrLambda(ctx);
}

function parseCall(ctx: ParseContext): Expr {
  const name = ctx.next();
  const fn = filterFunction(name.text);
  if (fn === undefined) {
    throw ctx.error(name.start, name.text, `unknown function '${name.text}'`);
  }
  const { arity } = FILTER_FUNCTIONS[fn];
  const open = ctx.next();
  const args = ctx.nested(open, () => (isPunct(ctx.peek(), ')') ? [] : parseCommaSeparated(ctx, () => parseOr(ctx))));
  const close = ctx.expect(')');
  if (args.length !== arity) {
    const plural = (arity as number) === 1 ? 'argument' : 'arguments';
    const detail = `function '${name.text}' takes ${arity} ${plural} but got ${args.length},`;
    throw ctx.error(name.start, name.text, detail);
  }
  return { kind: 'call', name: fn, args, span: { start: name.start, end: close.end } };
}

/** `Address/City`, or a lambda `Companies/any(c: c/Company/Id eq 'x')` / `Companies/any()`. */
function parsePathOrLambda(ctx: ParseContext): Expr {
  const first = ctx.next();
  const segments = [first.text];
  let last: Token = first;
  for (;;) {
    const slash = ctx.peek();
    if (!isPunct(slash, '/') || slash.start !== last.end) break;
    ctx.next();
    last = ctx.adjacentIdentifier(slash, 'a property name');
    if ((last.text === 'any' || last.text === 'all') && isPunct(ctx.peek(), '(')) {
      return parseLambda(ctx, segments, last.text, first.start);
    }
    segments.push(last.text);
  }
  return { kind: 'path', segments, span: { start: first.start, end: last.end } };
}

function parseLambda(ctx: ParseContext, collection: string[], op: 'any' | 'all', start: number): Expr {
  const open = ctx.next();
  const { variable, body } = ctx.nested(open, () => {
    if (isPunct(ctx.peek(), ')')) return { variable: null, body: null };
    const name = ctx.peek();
    if (name.kind !== 'identifier' || RESERVED.has(name.text)) {
      throw ctx.expected('a lambda variable', name);
    }
    ctx.next();
    ctx.expect(':');
    return { variable: name.text, body: parseOr(ctx) };
  });
  const close = ctx.expect(')');
  return { kind: 'lambda', op, collection, variable, body, span: { start, end: close.end } };
}
