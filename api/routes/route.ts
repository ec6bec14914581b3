import type { EntityDefinition } from '../../domain/entities';
import type { Policy } from '../../domain/auth/roles';

/**
 * One entry of the route table (route-table.ts): everything the service says about a path in one
 * place. Express dispatch (dispatch.ts), the OpenAPI paths (api/openapi/document.ts), the metric
 * `route` label (api/http/route-label.ts) and `$batch` (api/batch/) all read it.
 */

/** The methods a route may declare (HEAD is answered by GET, OPTIONS by the dispatcher). */
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof ROUTE_METHODS)[number];

/** Who may call: no token (`none`), any authenticated caller (`any`), or a caller with one of the roles. */
export type RoutePolicy = Policy | 'any' | 'none';

/** What a request to the route becomes inside `$batch` (DESIGN §12); absent: not reachable in a batch. */
export type BatchStepKind = 'read' | 'create' | 'replace' | 'patch' | 'delete';

/** The names of the handlers the app supplies (api/app.ts); a route names the one serving it. */
export type HandlerName =
  | 'healthLive'
  | 'healthReady'
  | 'metrics'
  | 'openApiDocument'
  | 'docsPage'
  | 'docsAsset'
  | 'bullBoardLoginCallback'
  | 'bullBoardLogout'
  | 'bullBoardLoggedOut'
  | 'bullBoard'
  | 'batch'
  | 'odataBatch'
  | 'whoAmI'
  | 'availableRoles'
  | 'listRoleAssignments'
  | 'addRoleAssignment'
  | 'getRoleAssignment'
  | 'removeRoleAssignment'
  | 'listSubscriptions'
  | 'createSubscription'
  | 'getSubscription'
  | 'patchSubscription'
  | 'deleteSubscription'
  | 'listDeliveries'
  | 'listJobs'
  | 'rebuildViews'
  | 'getJob'
  | 'retryJob'
  | 'export'
  | 'changes'
  | 'getCommand'
  | 'listEntities'
  | 'countEntities'
  | 'getEntity'
  | 'createEntity'
  | 'replaceEntity'
  | 'patchEntity'
  | 'deleteEntity'
  | 'odataServiceDocument'
  | 'odataMetadata'
  | 'odataList'
  | 'odataCount'
  | 'odataEntity'
  | 'odataNavigation'
  | 'odataNavigationCount'
  | 'odataNavigationMember'
  | 'odataCreate'
  | 'odataReplace'
  | 'odataPatch'
  | 'odataDelete';

export interface Operation {
  handler: HandlerName;
  /** Media types the request body may have (the handler answers 415 for others). */
  accepts?: readonly string[];
  /** Reachable inside `$batch`, as this kind of step. */
  batch?: BatchStepKind;
}

export interface Route {
  /** The service root the pattern lies under: '' for the root of today, `/odata` for the OData service (DESIGN §17). */
  root: string;
  /**
   * The path under the root, `{name}` a variable segment: `/Schemes/{key}`. With the root it is the
   * route's stable label, its metric `route` label and its OpenAPI path. Entity set names and
   * `$`-segments match exactly; the service's own words without regard to case (as Express did).
   */
  pattern: string;
  policy: RoutePolicy;
  operations: Partial<Record<Method, Operation>>;
  /** Every method and every path under the pattern goes to this handler (Bull Board's pages and API). */
  mount?: HandlerName;
  /** Methods answered 405 with `Allow` instead of 404 (`others`: every method not in `operations`). */
  refuse?: { methods: readonly string[] | 'others'; detail: string };
  /** The entity the route serves (entity sets, their keys and counts, exports). */
  entity?: EntityDefinition;
  /** Reads its own body (`$batch`, with BATCH_MAX_BYTES): dispatched before the JSON body parser. */
  ownBody?: true;
}

export function labelOf(route: Route): string {
  return `${route.root}${route.pattern}`;
}

/** The methods a route answers, as `Allow` lists them. */
export function allowOf(routes: readonly Route[]): string[] {
  const methods = new Set<string>();
  for (const route of routes) {
    for (const method of Object.keys(route.operations)) {
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
  }
  return [...methods].sort();
}
