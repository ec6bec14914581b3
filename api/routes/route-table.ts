import { POLICY } from '../../domain/auth/roles';
import { ENTITIES, READ_MODELS, type EntityDefinition } from '../../domain/entities';
import { SUBSCRIPTIONS_PATH } from '../../domain/webhooks/subscription';
import type { HandlerName, Route } from './route';

/**
 * THE route table: every route the service answers, once. The entity routes derive from the entity
 * definitions (domain/entities/); the service's own routes are listed below. Adding an endpoint is
 * adding one entry here (and its handler in api/app.ts, its operation text in api/openapi/document.ts).
 */

/** The service root of today's routes. */
export const ROOT = '';

/** The OData service root (DESIGN §17): the same entities, read and written in the OData JSON format. */
export const ODATA_ROOT = '/odata';

export const BULL_BOARD_PATH = '/admin/queues';

const JSON_BODY = ['application/json'] as const;
/** `/odata/$batch`: the JSON batch format and OData 4.0's multipart one (DESIGN §17). */
const ODATA_BATCH_BODY = ['application/json', 'multipart/mixed'] as const;
const PATCH_BODY = ['application/json-patch+json'] as const;

/** Read models (`/Activities`) are written only by workers: writes are 405, not 404. */
const READ_ONLY = (entity: EntityDefinition) => ({ methods: ['POST'], detail: `/${entity.route} is read-only.` });

/** The handlers of one service root's entity routes, and the body its PATCH takes. */
interface SetHandlers {
  list: HandlerName;
  create: HandlerName;
  count: HandlerName;
  get: HandlerName;
  replace: HandlerName;
  patch: HandlerName;
  delete: HandlerName;
  patchBody: readonly string[];
}

const ROOT_SET: SetHandlers = {
  list: 'listEntities',
  create: 'createEntity',
  count: 'countEntities',
  get: 'getEntity',
  replace: 'replaceEntity',
  patch: 'patchEntity',
  delete: 'deleteEntity',
  patchBody: PATCH_BODY,
};

/**
 * `/<Set>`, `/<Set>/$count`, `/<Set>/{key}` of one entity under a service root (spec §4 at the
 * root, DESIGN §17 under `/odata`, where a PATCH is a JSON object: merge), each reachable inside
 * that root's `$batch`. Read models refuse writes with 405, not 404.
 */
function entityRoutes(entity: EntityDefinition, root = ROOT, handlers = ROOT_SET): Route[] {
  const readOnly = READ_MODELS.includes(entity);
  const base = { root, policy: POLICY.default, entity };
  return [
    {
      ...base,
      pattern: `/${entity.route}`,
      operations: {
        GET: { handler: handlers.list, batch: 'read' },
        ...(readOnly ? {} : { POST: { handler: handlers.create, accepts: JSON_BODY, batch: 'create' } }),
      },
      ...(readOnly ? { refuse: READ_ONLY(entity) } : {}),
    },
    { ...base, pattern: `/${entity.route}/$count`, operations: { GET: { handler: handlers.count, batch: 'read' } } },
    {
      ...base,
      pattern: `/${entity.route}/{key}`,
      operations: {
        GET: { handler: handlers.get, batch: 'read' },
        ...(readOnly
          ? {}
          : {
              PUT: { handler: handlers.replace, accepts: JSON_BODY, batch: 'replace' },
              PATCH: { handler: handlers.patch, accepts: handlers.patchBody, batch: 'patch' },
              DELETE: { handler: handlers.delete, batch: 'delete' },
            }),
      },
      ...(readOnly ? { refuse: { ...READ_ONLY(entity), methods: ['PUT', 'PATCH', 'DELETE'] } } : {}),
    },
  ];
}

function exportRoute(entity: EntityDefinition): Route {
  return {
    root: ROOT,
    pattern: `/Export/${entity.route}`,
    policy: POLICY.default,
    entity,
    operations: { GET: { handler: 'export' } },
  };
}

const open = (pattern: string, handler: Route['operations']['GET']): Route => ({
  root: ROOT,
  pattern,
  policy: 'none',
  operations: { GET: handler! },
});

/** The service's own routes (in the order the OpenAPI document lists them; matching puts a mount last). */
const SERVICE_ROUTES: Route[] = [
  {
    root: ROOT,
    pattern: '/$batch',
    // Policies apply per request inside (DESIGN §12): any authenticated caller may send one.
    policy: 'any',
    operations: { POST: { handler: 'batch', accepts: JSON_BODY } },
    refuse: { methods: 'others', detail: '/$batch takes POST.' },
    ownBody: true,
  },
  { root: ROOT, pattern: '/Commands/{id}', policy: POLICY.default, operations: { GET: { handler: 'getCommand' } } },
  { root: ROOT, pattern: '/Roles', policy: 'any', operations: { GET: { handler: 'whoAmI' } } },
  {
    root: ROOT,
    pattern: '/Roles/Available',
    policy: POLICY.default,
    operations: { GET: { handler: 'availableRoles' } },
  },
  {
    root: ROOT,
    pattern: '/Roles/Assignments',
    policy: POLICY.adminOnly,
    operations: {
      GET: { handler: 'listRoleAssignments' },
      POST: { handler: 'addRoleAssignment', accepts: JSON_BODY },
    },
  },
  {
    root: ROOT,
    pattern: '/Roles/Assignments/{id}',
    policy: POLICY.adminOnly,
    operations: { GET: { handler: 'getRoleAssignment' }, DELETE: { handler: 'removeRoleAssignment' } },
  },
  {
    root: ROOT,
    pattern: SUBSCRIPTIONS_PATH,
    policy: POLICY.adminOnly,
    operations: {
      GET: { handler: 'listSubscriptions' },
      POST: { handler: 'createSubscription', accepts: JSON_BODY },
    },
  },
  {
    root: ROOT,
    pattern: `${SUBSCRIPTIONS_PATH}/{id}`,
    policy: POLICY.adminOnly,
    operations: {
      GET: { handler: 'getSubscription' },
      PATCH: { handler: 'patchSubscription', accepts: PATCH_BODY },
      DELETE: { handler: 'deleteSubscription' },
    },
  },
  {
    root: ROOT,
    pattern: `${SUBSCRIPTIONS_PATH}/{id}/Deliveries`,
    policy: POLICY.adminOnly,
    operations: { GET: { handler: 'listDeliveries' } },
  },
  { root: ROOT, pattern: '/Jobs', policy: POLICY.adminOnly, operations: { GET: { handler: 'listJobs' } } },
  {
    root: ROOT,
    pattern: '/Jobs/RebuildViews',
    policy: POLICY.adminOnly,
    operations: { POST: { handler: 'rebuildViews' } },
  },
  { root: ROOT, pattern: '/Jobs/{queue}/{id}', policy: POLICY.adminOnly, operations: { GET: { handler: 'getJob' } } },
  {
    root: ROOT,
    pattern: '/Jobs/{queue}/{id}/retry',
    policy: POLICY.adminOnly,
    operations: { POST: { handler: 'retryJob' } },
  },
  open('/health/live', { handler: 'healthLive' }),
  open('/health/ready', { handler: 'healthReady' }),
  open('/metrics', { handler: 'metrics' }),
  open('/openapi.json', { handler: 'openApiDocument' }),
  // Bull Board: its pages and its own API, any method, under one mount.
  { root: ROOT, pattern: BULL_BOARD_PATH, policy: POLICY.adminOnly, operations: {}, mount: 'bullBoard' },
  // Bull Board's login (DESIGN §15), when configured; otherwise these paths are the board's.
  open(`${BULL_BOARD_PATH}/auth/callback`, { handler: 'bullBoardLoginCallback' }),
  open(`${BULL_BOARD_PATH}/auth/logout`, { handler: 'bullBoardLogout' }),
  open(`${BULL_BOARD_PATH}/auth/logged-out`, { handler: 'bullBoardLoggedOut' }),
  open('/docs', { handler: 'docsPage' }),
  open('/docs/{asset}', { handler: 'docsAsset' }),
  { root: ROOT, pattern: '/Changes', policy: POLICY.default, operations: { GET: { handler: 'changes' } } },
];

const ODATA_SET: SetHandlers = {
  list: 'odataList',
  create: 'odataCreate',
  count: 'odataCount',
  get: 'odataEntity',
  replace: 'odataReplace',
  patch: 'odataPatch',
  delete: 'odataDelete',
  patchBody: JSON_BODY,
};

/**
 * One entity set under `/odata` (DESIGN §17): the set, its `$count`, an entity by key
 * (`Schemes('k')` and `Schemes(Id='k')` are matched as the key segment `Schemes/k`, route-match.ts)
 * and a navigation property of it (or a complex collection property), with the `$count` of a
 * navigation collection and a member of one by key (`Developments('d')`). Writes are the
 * root's, with OData bodies and the same `$batch` kinds (entityRoutes).
 * Keep `writesOf` (api/odata/metadata/set-capabilities.ts) saying what these serve. Each is
 * reachable inside `/odata/$batch`, answered there as alone.
 */
function odataEntityRoutes(entity: EntityDefinition): Route[] {
  const base = { root: ODATA_ROOT, policy: POLICY.default, entity };
  return [
    ...entityRoutes(entity, ODATA_ROOT, ODATA_SET),
    {
      ...base,
      pattern: `/${entity.route}/{key}/{navigation}`,
      operations: { GET: { handler: 'odataNavigation', batch: 'read' } },
    },
    {
      ...base,
      pattern: `/${entity.route}/{key}/{navigation}/$count`,
      operations: { GET: { handler: 'odataNavigationCount', batch: 'read' } },
    },
    // After `$count`: a member of a navigation collection by key, `Schemes('k')/Developments('d')`.
    {
      ...base,
      pattern: `/${entity.route}/{key}/{navigation}/{navigationKey}`,
      operations: { GET: { handler: 'odataNavigationMember', batch: 'read' } },
    },
  ];
}

/** The service document and `$metadata`: open without a token, like `/openapi.json`. */
const ODATA_SERVICE_ROUTES: Route[] = [
  { root: ODATA_ROOT, pattern: '', policy: 'none', operations: { GET: { handler: 'odataServiceDocument' } } },
  { root: ODATA_ROOT, pattern: '/$metadata', policy: 'none', operations: { GET: { handler: 'odataMetadata' } } },
  {
    root: ODATA_ROOT,
    pattern: '/$batch',
    // As the root's: policies apply per request inside, the body has its own limit (BATCH_MAX_BYTES).
    policy: 'any',
    operations: { POST: { handler: 'odataBatch', accepts: ODATA_BATCH_BODY } },
    refuse: { methods: 'others', detail: '/odata/$batch takes POST.' },
    ownBody: true,
  },
];

const READABLE = [...ENTITIES, ...READ_MODELS];

export const ROUTES: readonly Route[] = [
  ...READABLE.flatMap((entity) => entityRoutes(entity)),
  ...SERVICE_ROUTES,
  ...READABLE.map(exportRoute),
  ...ODATA_SERVICE_ROUTES,
  ...READABLE.flatMap(odataEntityRoutes),
];
