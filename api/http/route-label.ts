import { readableByRoute } from '../../domain/entities';

/**
 * The route PATTERN of a request path, for the `route` label of `http_request_duration_seconds`:
 * never the raw URL, so keys, ids and whatever else a client puts in a path add no label value
 * (bounded cardinality). Entity sets are named (`/Schemes`, `/Schemes/{key}`, `/Schemes/$count`);
 * a path that is none of the service's routes is `unmatched`.
 */

export const UNMATCHED = 'unmatched';

/** Fixed paths, matched without regard to case as Express routes them. */
const FIXED = new Map(
  [
    '/$batch',
    '/Changes',
    '/metrics',
    '/health/live',
    '/health/ready',
    '/Jobs',
    '/Jobs/RebuildViews',
    '/Roles',
    '/Roles/Available',
    '/Roles/Assignments',
    '/Subscriptions',
  ].map((path) => [path.toLowerCase(), path]),
);

/** Path shapes with a variable segment (`*`), matched without regard to case. */
const SHAPES: [RegExp, string][] = [
  [/^\/commands\/[^/]+$/i, '/Commands/{id}'],
  [/^\/jobs\/[^/]+\/[^/]+$/i, '/Jobs/{queue}/{id}'],
  [/^\/jobs\/[^/]+\/[^/]+\/retry$/i, '/Jobs/{queue}/{id}/retry'],
  [/^\/roles\/assignments\/[^/]+$/i, '/Roles/Assignments/{id}'],
  [/^\/subscriptions\/[^/]+$/i, '/Subscriptions/{id}'],
  [/^\/subscriptions\/[^/]+\/deliveries$/i, '/Subscriptions/{id}/Deliveries'],
  [/^\/admin\/queues(\/.*)?$/i, '/admin/queues'],
];

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function routeLabel(url: string): string {
  let path = url.split('?')[0]!.split('#')[0]!;
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  const fixed = FIXED.get(path.toLowerCase());
  if (fixed) return fixed;
  for (const [shape, label] of SHAPES) if (shape.test(path)) return label;
  const segments = path.split('/').slice(1).map(decoded);
  if (segments[0]?.toLowerCase() === 'export' && segments.length === 2) {
    const entity = readableByRoute(segments[1]!);
    return entity ? `/Export/${entity.route}` : UNMATCHED;
  }
  const entity = segments[0] === undefined ? undefined : readableByRoute(segments[0]);
  if (!entity) return UNMATCHED;
  if (segments.length === 1) return `/${entity.route}`;
  if (segments.length === 2) return segments[1] === '$count' ? `/${entity.route}/$count` : `/${entity.route}/{key}`;
  return UNMATCHED;
}
