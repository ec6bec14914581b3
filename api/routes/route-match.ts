import { readableByRoute } from '../../domain/entities';
import { splitKeyPredicate } from '../../domain/odata/key-predicate';
import { labelOf, type Method, type Operation, type Route } from './route';
import { ODATA_ROOT, ROUTES } from './route-table';

/**
 * Matching a request against the route table, once: the path's first segment picks the few routes
 * that can match, then each is compared segment by segment. Used by the Express dispatcher, the
 * metric labels and `$batch`, so all three agree on what a path is.
 */

type Segment = { literal: string; exact: boolean } | { variable: string };

interface Compiled {
  route: Route;
  segments: Segment[];
}

/** A route whose pattern matches a path, with the path's variables. */
export interface PathMatch {
  route: Route;
  params: Record<string, string>;
}

/** What a method and path come to. */
export type Resolution =
  | { kind: 'operation'; route: Route; operation: Operation; params: Record<string, string> }
  /** A method the route refuses with 405 (read models, `$batch`). */
  | { kind: 'refused'; route: Route }
  /** `OPTIONS` on a known path. */
  | { kind: 'options'; routes: Route[] }
  /** The path is known, not for this method. */
  | { kind: 'method'; routes: Route[] }
  /** No route; `badEncoding`: a segment is not valid percent-encoding. */
  | { kind: 'none'; badEncoding: boolean };

/** Entity set names and `$`-segments are exact (OData); the service's own words match without regard to case. */
function compile(route: Route): Compiled {
  const segments = labelOf(route)
    .split('/')
    .slice(1)
    .map((part): Segment => {
      const variable = /^\{(\w+)\}$/.exec(part);
      if (variable) return { variable: variable[1]! };
      const exact = part.startsWith('$') || readableByRoute(part) !== undefined;
      return { literal: exact ? part : part.toLowerCase(), exact };
    });
  return { route, segments };
}

function decoded(segment: string): string | null {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

const ODATA_SEGMENT = ODATA_ROOT.slice(1).toLowerCase();

/**
 * The decoded segments of a path (null where a segment is not valid percent-encoding). Under
 * `/odata` a key predicate is read as the key segment it names: `Schemes('k')` as `Schemes`, `k`.
 */
export function segmentsOf(path: string): (string | null)[] {
  // A trailing slash is the same route, as Express's non-strict routing had it.
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segments = trimmed.split('/').slice(1).map(decoded);
  if (segments[0]?.toLowerCase() !== ODATA_SEGMENT) return segments;
  return segments.flatMap((segment) => (segment === null ? [null] : splitKeyPredicate(segment)));
}

function matchOne(compiled: Compiled, segments: readonly (string | null)[]): PathMatch | undefined {
  const pattern = compiled.segments;
  const mount = compiled.route.mount !== undefined;
  if (mount ? segments.length < pattern.length : segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i]!;
    const segment = segments[i];
    if (segment === null || segment === undefined) return undefined;
    if ('variable' in part) {
      if (segment === '') return undefined;
      params[part.variable] = segment;
    } else if ((part.exact ? segment : segment.toLowerCase()) !== part.literal) return undefined;
  }
  return { route: compiled.route, params };
}

export interface RouteMatcher {
  /** Every route whose pattern matches the path, in table order. */
  matchPath(path: string): { matches: PathMatch[]; badEncoding: boolean };
  resolve(method: string, path: string): Resolution;
}

/** The key of the first segment a route can be found under. */
const keyOf = (segment: string | null | undefined) => (segment ?? '').toLowerCase();

export function routeMatcher(routes: readonly Route[], present: (route: Route) => boolean = () => true): RouteMatcher {
  const byFirst = new Map<string, Compiled[]>();
  for (const route of routes) {
    if (!present(route)) continue;
    const compiled = compile(route);
    const first = compiled.segments[0];
    const key = first && 'literal' in first ? first.literal.toLowerCase() : '';
    if (!byFirst.has(key)) byFirst.set(key, []);
    byFirst.get(key)!.push(compiled);
  }
  // A mount takes what no route of its own under it takes (Bull Board's login routes before the board).
  for (const candidates of byFirst.values())
    candidates.sort((a, b) => Number(!!a.route.mount) - Number(!!b.route.mount));

  function matchPath(path: string) {
    const segments = segmentsOf(path);
    const matches: PathMatch[] = [];
    for (const compiled of byFirst.get(keyOf(segments[0])) ?? []) {
      const match = matchOne(compiled, segments);
      if (match) matches.push(match);
    }
    return { matches, badEncoding: segments.includes(null) };
  }

  function resolve(method: string, path: string): Resolution {
    const { matches, badEncoding } = matchPath(path);
    if (!matches.length) return { kind: 'none', badEncoding };
    // HEAD is GET without a body; a mount takes every method.
    const wanted = (method === 'HEAD' ? 'GET' : method) as Method;
    for (const { route, params } of matches) {
      if (route.mount !== undefined) return { kind: 'operation', route, operation: { handler: route.mount }, params };
      const operation = route.operations[method as Method] ?? route.operations[wanted];
      if (operation) return { kind: 'operation', route, operation, params };
    }
    for (const { route } of matches) {
      const refused = route.refuse?.methods;
      if (refused === 'others' || refused?.includes(method)) return { kind: 'refused', route };
    }
    const found = matches.map((match) => match.route);
    return method === 'OPTIONS' ? { kind: 'options', routes: found } : { kind: 'method', routes: found };
  }

  return { matchPath, resolve };
}

/** The whole table, every route present: for labels and `$batch`. */
export const TABLE = routeMatcher(ROUTES);
