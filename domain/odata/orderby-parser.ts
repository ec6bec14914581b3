/** $orderby: comma-separated `path [asc|desc]`; the direction defaults to asc. */
import { OrderByItem } from './ast';
import { isKeyword, ParseContext } from './parse-context';
import { parsePropertyPath } from './property-path';

export function parseOrderBy(text: string, maxNodes?: number): OrderByItem[] {
  const ctx = new ParseContext(text, '$orderby', maxNodes);
  const items = parseOrderByItems(ctx);
  ctx.expectEnd();
  return items;
}

/** Stops at the first token that cannot continue the list (`;` or `)` inside $expand). */
export function parseOrderByItems(ctx: ParseContext): OrderByItem[] {
  const items = [parseOrderByItem(ctx)];
  while (ctx.accept(',')) items.push(parseOrderByItem(ctx));
  return items;
}

function parseOrderByItem(ctx: ParseContext): OrderByItem {
  const { segments, span } = parsePropertyPath(ctx, 'a property path');
  const next = ctx.peek();
  if (isKeyword(next, 'asc') || isKeyword(next, 'desc')) {
    ctx.next();
    const direction = next.text === 'desc' ? 'desc' : 'asc';
    return { path: segments, direction, span: { start: span.start, end: next.end } };
  }
  return { path: segments, direction: 'asc', span };
}
