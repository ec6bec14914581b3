/** `Address/Country/Name` as used by $orderby and $expand (no lambdas there). */
import { Span } from './ast';
import { isPunct, ParseContext } from './parse-context';
import { Token } from './query-lexer';

export interface ParsedPath {
  segments: string[];
  span: Span;
}

export function parsePropertyPath(ctx: ParseContext, what: string): ParsedPath {
  const first = ctx.peek();
  if (first.kind !== 'identifier') throw ctx.expected(what, first);
  ctx.next();
  const segments = [first.text];
  let last: Token = first;
  for (;;) {
    const slash = ctx.peek();
    // `A /B` is not a path; the caller reports the stray '/'.
    if (!isPunct(slash, '/') || slash.start !== last.end) break;
    ctx.next();
    last = ctx.adjacentIdentifier(slash, 'a property name');
    segments.push(last.text);
  }
  return { segments, span: { start: first.start, end: last.end } };
}
