/**
 * $select (OData, honoured under `/odata` only, DESIGN §17): comma-separated property names or `*`.
 * Paths into complex or related members are not offered (`$expand=Address($select=City)` says it).
 */
import { SelectItem } from './ast';
import { isPunct, ParseContext } from './parse-context';

export function parseSelect(text: string, maxNodes?: number, offset = 0): SelectItem[] {
  const ctx = new ParseContext(text, '$select', maxNodes);
  const items: SelectItem[] = [];
  do {
    const token = ctx.peek();
    if (isPunct(token, '*')) {
      ctx.next();
      items.push({ name: '*', position: offset + token.start });
    } else if (token.kind === 'identifier') {
      ctx.next();
      if (isPunct(ctx.peek(), '/')) {
        throw ctx.error(
          ctx.peek().start,
          '/',
          'a path is not offered here: select the property, or $expand it with its own $select',
        );
      }
      items.push({ name: token.text, position: offset + token.start });
    } else throw ctx.expected("a property name or '*'", token);
  } while (ctx.accept(','));
  ctx.expectEnd();
  return items;
}
