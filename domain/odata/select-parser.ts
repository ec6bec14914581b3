/**
 * $select (OData, honoured under `/odata` only, DESIGN §17): comma-separated property names,
 * paths into complex properties (`Notes/Text`) or `*`. Whether a path's first segment is complex
 * (rather than a navigation property, which OData's grammar does not let a path cross) is the
 * plan's to judge.
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
      items.push({ name: '*', path: [], position: offset + token.start });
    } else if (token.kind === 'identifier') {
      ctx.next();
      const path: string[] = [];
      for (let slash = ctx.accept('/'); slash; slash = ctx.accept('/')) {
        path.push(ctx.adjacentIdentifier(slash, 'a property name').text);
      }
      items.push({ name: token.text, path, position: offset + token.start });
    } else throw ctx.expected("a property name or '*'", token);
  } while (ctx.accept(','));
  ctx.expectEnd();
  return items;
}
