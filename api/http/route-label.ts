import { labelOf } from '../routes/route';
import { TABLE, type RouteMatcher } from '../routes/route-match';

/**
 * The route PATTERN of a request path, for the `route` label of `http_request_duration_seconds`:
 * the label of the route-table entry (api/routes/route-table.ts) the path matches, never the raw
 * URL, so keys, ids and whatever else a client puts in a path add no label value (bounded
 * cardinality: one value per table entry, plus `unmatched` for a path that is no route's).
 */

export const UNMATCHED = 'unmatched';

/** The labels of the routes a matcher knows (the whole table's: `routeLabel`). */
export function labeler(routes: RouteMatcher): (url: string) => string {
  return (url) => {
    const path = url.split('?')[0]!.split('#')[0]!;
    const [first] = routes.matchPath(path).matches;
    return first ? labelOf(first.route) : UNMATCHED;
  };
}

export const routeLabel = labeler(TABLE);
