import { jsonByteLengthExceeds } from '../../domain/json/json-size';
import { parse as parseQuery } from 'node:querystring';
import type { BatchRead, BatchStep, BatchWrite } from '../../domain/batch/batch-command';
import type { BatchRequest } from '../../domain/batch/batch-request';
import { POLICY } from '../../domain/auth/roles';
import type { CommandName } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import {
  DomainError,
  badRequest,
  failedDependency,
  methodNotAllowed,
  notFound,
} from '../../domain/errors/domain-error';
import { prefersRepresentation } from '../http/answer';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import type { PatchLimits } from '../../domain/writes/json-patch';
import type { Caller } from '../auth/caller';
import { policyRefusal } from '../auth/require-role';
import { queryTokenRefusal } from '../auth/authenticate';
import { MAX_REQUEST_BODY_BYTES, requestBodyTooLarge } from '../http/request-body-limit';
import { labelOf, type BatchStepKind, type Route, type RoutePolicy } from '../routes/route';
import { TABLE, type RouteMatcher } from '../routes/route-match';
import { ROOT } from '../routes/route-table';
import { readRequestOf } from '../entities/entity-read.routes';
import { WRONG_MEDIA_TYPE, writeCommandOf, type WriteInput } from '../entities/write-command';

/**
 * Each request of a `$batch` (DESIGN §12) through the steps the same request alone passes: the
 * query-token refusal (api/auth/authenticate.ts), the policy (api/auth/require-role.ts), the route
 * table (api/routes/), then the read builder (readRequestOf) or the write builder
 * (api/entities/write-command.ts). The batch's own part is its transport: the request read out of
 * its batch entry (URL, headers, body), `$<id>` URLs, the per-request body limit and the refusal of
 * an Idempotency-Key inside a batch. A request that fails answers its own problem without running
 * (and fails its group); the rest become steps for the command worker, `$<id>` references in them.
 */

export interface StepContext {
  caller: Caller;
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
  /** The earlier requests, by id (a `$s1` URL names the entity s1 created). */
  earlier: ReadonlyMap<string, BatchRequest>;
  /** Real authentication: `access_token` in a URL is refused, as on a lone request (api/auth/authenticate.ts). */
  queryTokensRefused: boolean;
  /** The table requests are resolved in: the service's (TABLE) unless given. */
  routes?: RouteMatcher;
  /**
   * The service root the batch was sent to: the root's (ROOT) unless given. Its requests reach only
   * the routes under it; `/odata`'s reads are built by `odata.readOf` (api/odata/odata-batch-read.ts).
   */
  root?: {
    path: string;
    readOf(target: BatchTarget, request: BatchRequest): BatchRead;
    /** A write's builder (the one of the same request alone) and what its answer asks for. */
    writeOf(
      target: BatchTarget,
      request: BatchRequest,
    ): { commandOf: typeof writeCommandOf; representation: boolean; odata: NonNullable<BatchWrite['odata']> };
  };
}

/** The query parameter a lone request may not carry a token in (RFC 6750 §2.3), by its decoded name. */
const QUERY_TOKEN = 'access_token';

/** The methods of the batch format (OData JSON batch): any other is a 405 of its own. */
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];

/** What a request's URL names, resolved against the route table (api/routes/route-table.ts). */
export interface BatchTarget {
  kind: BatchStepKind;
  entity: EntityDefinition;
  /** The route's variables (`key`, `navigation`). */
  params: Record<string, string>;
  accepts?: readonly string[];
  /** The key segment as written. */
  key?: string;
  keyReference?: string;
  /** The route is a `/$count` (of the set, or of a navigation collection under `/odata`). */
  count?: true;
  query: Record<string, unknown>;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`The URL segment '${segment}' is not valid percent-encoding.`);
  }
}

/** The query of a URL as the API's `simple` parser gives it: names decoded (`%61ccess_token` is `access_token`). */
function queryOf(url: string): Record<string, unknown> {
  const mark = url.indexOf('?');
  return mark < 0 ? {} : (parseQuery(url.slice(mark + 1)) as Record<string, unknown>);
}

/**
 * A token in the URL is what a lone request is refused for, before its role or route is looked at.
 * With mock authentication, which reads no token, it is dropped instead: either way it never
 * reaches the queued job.
 */
function refuseQueryToken(request: BatchRequest, ctx: StepContext): void {
  const refused = ctx.queryTokensRefused ? queryTokenRefusal(queryOf(request.url)) : undefined;
  if (refused) throw refused;
}

const inBatch = (route: Route) => Object.values(route.operations).some((operation) => operation.batch);

/** The route's own policy, as dispatch guards it (api/routes/dispatch.ts): before its method is refused or served. */
function refuseByPolicy(policy: RoutePolicy, caller: Caller): void {
  const refused = policy === 'any' || policy === 'none' ? undefined : policyRefusal(policy, caller);
  if (refused) throw refused;
}

/** The entity set a creating request's path names (`$s1` URLs name what s1 created). */
function createdEntityOf(creator: BatchRequest, table: RouteMatcher, root: string): EntityDefinition | undefined {
  const path = `${root}/${relativeUrl(creator, root).split('?')[0]!}`;
  return table
    .matchPath(path)
    .matches.find(({ route }) => route.entity && labelOf(route) === `${root}/${route.entity.route}`)?.route.entity;
}

/**
 * A request's URL relative to the batch's service root, without its leading `/`. At the root a
 * leading `/` is allowed (DESIGN §12); under `/odata` a URL may also be absolute or start with
 * `/odata/` (OData 4.01 §11.7.3), and one naming anything outside `/odata` reaches nothing.
 */
function relativeUrl(request: BatchRequest, root: string): string {
  if (root === ROOT) return request.url.replace(/^\//, '');
  const path = request.url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '');
  if (!path.startsWith('/')) return path;
  const lower = path.toLowerCase();
  const prefix = root.toLowerCase();
  if (lower === prefix || lower.startsWith(`${prefix}/`) || lower.startsWith(`${prefix}?`)) {
    return path.slice(prefix.length).replace(/^\//, '');
  }
  throw notFound(
    `No resource at ${request.method} ${path.split('?')[0]}: a batch to ${root} reaches ${root}'s routes only.`,
  );
}

/**
 * The route, key and query a request's URL names, found in the same route table a lone request is
 * dispatched by: a route without a batch step (admin routes, /Export, /Commands, /$batch, …) is
 * not reachable from a batch, whatever the role.
 */
function targetOf(request: BatchRequest, ctx: StepContext): BatchTarget {
  const table = ctx.routes ?? TABLE;
  const root = ctx.root?.path ?? ROOT;
  const url = relativeUrl(request, root);
  const mark = url.indexOf('?');
  // A trailing slash is the same route, as for a lone request.
  const path = (mark < 0 ? url : url.slice(0, mark)).replace(/\/$/, '');
  const query = queryOf(url);
  delete query[QUERY_TOKEN];
  // What the same request alone meets when no route matches (api/http/error-handler.ts).
  const noResource = () => notFound(`No resource at ${request.method} /${path}.`);
  let resolvedPath = `${root}/${path}`;
  let keyReference: string | undefined;
  let route: string;
  if (request.urlReference !== undefined) {
    const creator = ctx.earlier.get(request.urlReference)!;
    const entity = createdEntityOf(creator, table, root);
    if (!entity) throw failedDependency(`Request '${creator.id}' creates no entity, so '${request.id}' was not run.`);
    keyReference = request.urlReference;
    route = entity.route;
    resolvedPath = `${root}/${entity.route}/key`; // the keyed route of the set; the key itself comes from the creator
  } else {
    const segments = path.split('/').map(decodeSegment);
    const { matches } = table.matchPath(resolvedPath);
    if (matches.length && !matches.some(({ route }) => inBatch(route) && route.root === root)) {
      throw notFound(
        `No resource at ${request.method} /${path}: a batch reaches the entity routes and /Activities only.`,
      );
    }
    route = segments[0]!;
  }
  if (!METHODS.includes(request.method)) {
    throw methodNotAllowed(`${request.method} is not a method of /${route}.`, METHODS);
  }
  const resolution = table.resolve(request.method, resolvedPath);
  if (resolution.kind === 'operation' || resolution.kind === 'refused')
    refuseByPolicy(resolution.route.policy, ctx.caller);
  if (resolution.kind === 'refused') {
    throw methodNotAllowed(resolution.route.refuse!.detail, Object.keys(resolution.route.operations));
  }
  const kind = resolution.kind === 'operation' ? resolution.operation.batch : undefined;
  if (resolution.kind !== 'operation' || kind === undefined || resolution.route.root !== root) throw noResource();
  const { operation, params } = resolution;
  const key = keyReference === undefined ? params.key : undefined;
  return {
    kind,
    entity: resolution.route.entity!,
    params,
    ...(operation.accepts ? { accepts: operation.accepts } : {}),
    ...(key === undefined ? {} : { key }),
    ...(keyReference === undefined ? {} : { keyReference }),
    ...(labelOf(resolution.route).endsWith('/$count') ? { count: true as const } : {}),
    query,
  };
}

/** The media type a request's headers name (JSON when they name none). */
function mediaTypeOf(request: BatchRequest): string {
  return (request.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

/** The step of a write: the command the same request alone becomes (api/entities/write-command.ts). */
function writeStep(request: BatchRequest, target: BatchTarget, ctx: StepContext): BatchStep['write'] {
  if (request.body !== undefined && jsonByteLengthExceeds(request.body, MAX_REQUEST_BODY_BYTES)) {
    throw requestBodyTooLarge();
  }
  const ifMatch = request.headers['if-match'];
  const input: WriteInput = {
    ...(target.key === undefined ? {} : { key: target.key }),
    ...(ifMatch === undefined ? {} : { ifMatch }),
    body: (mediaType) => (mediaTypeOf(request) === mediaType ? request.body : WRONG_MEDIA_TYPE),
  };
  const under = ctx.root?.writeOf(target, request);
  const commandOf = under?.commandOf ?? writeCommandOf;
  const { fields } = commandOf(target.entity, target.kind as CommandName, target.accepts, input, ctx);
  return {
    ...fields,
    ...(target.keyReference === undefined ? {} : { keyReference: target.keyReference }),
    ...(under ? { odata: under.odata } : {}),
    representation: under ? under.representation : prefersRepresentation(request.headers.prefer),
    ...(request.bodyReferences ? { references: true as const } : {}),
  };
}

export function stepOf(request: BatchRequest, ctx: StepContext): BatchStep {
  const step: BatchStep = {
    id: request.id,
    method: METHODS.includes(request.method) ? (request.method as BatchStep['method']) : 'GET',
    ...(request.atomicityGroup === undefined ? {} : { atomicityGroup: request.atomicityGroup }),
    dependsOn: request.dependsOn,
  };
  try {
    refuseQueryToken(request, ctx);
    // The entity routes' policy, asked first as for a lone request outside the admin areas.
    const refused = policyRefusal(POLICY.default, ctx.caller);
    if (refused) throw refused;
    if (request.headers['idempotency-key'] !== undefined) {
      throw badRequest('Idempotency-Key applies to a whole batch: send it with POST /$batch, not inside a request.');
    }
    const target = targetOf(request, ctx);
    if (target.kind === 'read' && ctx.root) return { ...step, read: ctx.root.readOf(target, request) };
    if (target.kind === 'read') {
      const read = readRequestOf(target.entity, target, target.query, request.headers['if-none-match']);
      return {
        ...step,
        read: { ...read, ...(target.keyReference === undefined ? {} : { keyReference: target.keyReference }) },
      };
    }
    return { ...step, write: writeStep(request, target, ctx) };
  } catch (err) {
    if (err instanceof DomainError) return { ...step, failure: err.toFailure() };
    throw err;
  }
}
