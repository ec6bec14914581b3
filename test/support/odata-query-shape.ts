/**
 * What a request's `$select` and `$expand` ask an OData answer to show, read from the URL for the
 * contract check (independently of the service's own parsers): at each level the selected names
 * (undefined: every structural property) and the expanded navigation paths with their own options.
 */

export interface Shape {
  /** Names `$select` lists at this level; undefined when there is none or it has `*`. */
  select?: ReadonlySet<string>;
  /** Expanded paths (`Address`, `MarketBoundaries/Market`) and what each shows; `*` expands all. */
  expand: ReadonlyMap<string, Shape>;
  /** `$count=true` inside an expansion: `<nav>@odata.count` may come. */
  count: boolean;
}

/** `text` split at `separator`s outside parentheses and quotes. */
function splitTop(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function selectOf(text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const names = splitTop(text, ',');
  return names.includes('*') ? undefined : new Set(names);
}

function expandOf(text: string | undefined): Map<string, Shape> {
  const expand = new Map<string, Shape>();
  for (const item of text === undefined ? [] : splitTop(text, ',')) {
    const open = item.indexOf('(');
    const path = (open < 0 ? item : item.slice(0, open)).trim();
    const options = new Map<string, string>();
    if (open >= 0 && item.endsWith(')')) {
      for (const option of splitTop(item.slice(open + 1, -1), ';')) {
        const eq = option.indexOf('=');
        if (eq > 0) options.set(option.slice(0, eq).trim().toLowerCase(), option.slice(eq + 1));
      }
    }
    expand.set(path, shapeOf(options));
  }
  return expand;
}

function shapeOf(options: ReadonlyMap<string, string>): Shape {
  const select = selectOf(options.get('$select'));
  const shape = { expand: expandOf(options.get('$expand')), count: options.get('$count')?.trim() === 'true' };
  return select ? { ...shape, select } : shape;
}

/** The shape a request URL (path and query, as sent) asks for at its top level. */
export function shapeOfUrl(path: string): Shape {
  const params = new URL(`http://service${path}`).searchParams;
  const options = new Map<string, string>();
  for (const [name, value] of params) options.set(name.toLowerCase(), value);
  return shapeOf(options);
}

/** What `prefix/…` items of `paths` say below `prefix`. */
const below = (paths: Iterable<string>, prefix: string) =>
  [...paths].filter((p) => p.startsWith(`${prefix}/`)).map((p) => p.slice(prefix.length + 1));

/** The shape of the complex member `name`'s values: the `$select` paths and expansions under `name/`. */
export function shapeWithin(shape: Shape, name: string): Shape {
  const expand = new Map<string, Shape>();
  for (const [path, inner] of shape.expand) {
    if (path === '*') expand.set('*', inner);
    else if (path.startsWith(`${name}/`)) expand.set(path.slice(name.length + 1), inner);
  }
  // `Notes/Text` selects Text of each note; `Notes` (or no `$select`) all of it.
  const whole = !shape.select || shape.select.has(name);
  return whole ? { expand, count: false } : { expand, count: false, select: new Set(below(shape.select!, name)) };
}
