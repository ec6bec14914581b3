/**
 * $expand: comma-separated `Nav[/Nav](options)`, options separated by `;`. Nested $filter, $orderby
 * and $expand are parsed from the same token stream, so quoted `;` or `)` cannot split an option and
 * every error position is an offset into the whole $expand text.
 */
import { ExpandItem, ExpandOptions, SelectText } from './ast';
import { parseBooleanExpression } from './filter-parser';
import { parseOrderByItems } from './orderby-parser';
import { isKeyword, isPunct, ParseContext } from './parse-context';
import { parsePropertyPath } from './property-path';

const OPTION_NAMES: ReadonlySet<string> = new Set([
  '$expand',
  '$filter',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$select',
]);

export function parseExpand(text: string, maxNodes?: number): ExpandItem[] {
  const ctx = new ParseContext(text, '$expand', maxNodes);
  const items = parseExpandItems(ctx);
  ctx.expectEnd();
  return items;
}

function parseExpandItems(ctx: ParseContext): ExpandItem[] {
  const items = [parseExpandItem(ctx)];
  while (ctx.accept(',')) items.push(parseExpandItem(ctx));
  return items;
}

function parseExpandItem(ctx: ParseContext): ExpandItem {
  const { segments, span } = parsePropertyPath(ctx, 'a navigation property');
  const open = ctx.accept('(');
  if (!open) return { path: segments, options: {}, span };
  const options = ctx.nested(open, () => parseExpandOptions(ctx));
  const close = ctx.expect(')');
  return { path: segments, options, span: { start: span.start, end: close.end } };
}

/** Reads `$name=value` pairs up to, not including, the closing `)`. */
function parseExpandOptions(ctx: ParseContext): ExpandOptions {
  const options: ExpandOptions = {};
  const seen = new Set<string>();
  for (;;) {
    const name = ctx.peek();
    if (name.kind !== 'option' && name.kind !== 'identifier') {
      throw ctx.expected('an option such as $filter', name);
    }
    if (!OPTION_NAMES.has(name.text)) {
      throw ctx.error(name.start, name.text, `unknown option '${name.text}'`);
    }
    if (seen.has(name.text)) {
      throw ctx.error(name.start, name.text, `duplicate option '${name.text}'`);
    }
    seen.add(name.text);
    ctx.next();
    ctx.expect('=');
    parseOptionValue(ctx, name.text, options);

    const separator = ctx.peek();
    if (isPunct(separator, ')')) return options;
    if (!ctx.accept(';')) {
      throw separator.kind === 'end' ? ctx.expected("')'", separator) : ctx.unexpected(separator);
    }
  }
}

function parseOptionValue(ctx: ParseContext, name: string, options: ExpandOptions): void {
  switch (name) {
    case '$expand':
      options.expand = parseExpandItems(ctx);
      return;
    case '$filter':
      options.filter = parseBooleanExpression(ctx);
      return;
    case '$orderby':
      options.orderby = parseOrderByItems(ctx);
      return;
    case '$top':
      options.top = parseNonNegativeInteger(ctx);
      return;
    case '$skip':
      options.skip = parseNonNegativeInteger(ctx);
      return;
    case '$count':
      options.count = parseBoolean(ctx);
      return;
    default:
      options.select = skipSelect(ctx);
  }
}

function parseNonNegativeInteger(ctx: ParseContext): number {
  const token = ctx.peek();
  if (token.kind !== 'number' || !/^\d+$/.test(token.text) || !Number.isSafeInteger(token.value)) {
    throw ctx.expected('a non-negative integer', token);
  }
  ctx.next();
  return token.value;
}

function parseBoolean(ctx: ParseContext): boolean {
  const token = ctx.peek();
  if (!isKeyword(token, 'true') && !isKeyword(token, 'false')) {
    throw ctx.expected("'true' or 'false'", token);
  }
  ctx.next();
  return token.text === 'true';
}

/**
 * $select has no effect at the root (spec §4.1): skip its tokens, balancing parentheses, up to `;`
 * or `)`, and keep the text for `/odata`, which parses it (select-parser.ts).
 */
function skipSelect(ctx: ParseContext): SelectText {
  let depth = 0;
  const at = ctx.peek().start;
  const text = (end: number): SelectText => ({ text: ctx.lexer.text.slice(at, end), at });
  for (;;) {
    const token = ctx.peek();
    if (token.kind === 'end') return text(token.start);
    if (depth === 0 && (isPunct(token, ';') || isPunct(token, ')'))) return text(token.start);
    if (isPunct(token, '(')) depth++;
    if (isPunct(token, ')')) depth--;
    ctx.next();
  }
}
