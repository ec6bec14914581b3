import { jsonByteLengthExceeds } from '../../domain/json/json-size';
import { parse as parseQuery } from 'node:querystring';
import type { BatchStep } from '../../domain/batch/batch-command';
import type { BatchRequest } from '../../domain/batch/batch-request';
import { POLICY, policyAllows } from '../../domain/auth/roles';
import type { CommandName } from '../../domain/commands/command';
import { readableByRoute, type EntityDefinition } from '../../domain/entities';
import { keyOf, writableEntityOf } from '../../domain/entities/entity-key';
import {
  DomainError,
  badRequest,
  failedDependency,
  forbidden,
  methodNotAllowed,
  notFound,
  unauthorized,
  unsupportedMediaType,
} from '../../domain/errors/domain-error';
import { prefersRepresentation } from '../http/answer';
import { parseWriteBody } from '../../domain/validation/write-body';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import { parsePatch, type PatchLimits } from '../../domain/writes/json-patch';
import type { Caller } from '../auth/caller';
import { MAX_REQUEST_BODY_BYTES, requestBodyTooLarge } from '../http/request-body-limit';

/**
 * The API's check of each request of a `$batch` (DESIGN §12), the same a lone request gets: the
 * caller's policy, the route, the method, the media type, the body (shape, limits). A request that
 * fails answers its own problem without running (and fails its group); the rest become steps for
 * the command worker, `$<id>` references still in them.
 */

export interface StepContext {
  caller: Caller;
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
  /** The earlier requests, by id (a `$s1` URL names the entity s1 created). */
  earlier: ReadonlyMap<string, BatchRequest>;
  /** Real authentication: `access_token` in a URL is refused, as on a lone request (api/auth/authenticate.ts). */
  queryTokensRefused: boolean;
}

/** The query parameter a lone request may not carry a token in (RFC 6750 §2.3), by its decoded name. */
const QUERY_TOKEN = 'access_token';

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];

/** Routes of the service that are not entity routes: never reached through a batch, whatever the role. */
const SERVICE_ROUTES = new Set(['Jobs', 'Roles', 'Export', 'Commands', 'admin', 'health', '$batch', '%24batch']);

interface Target {
  route: string;
  entity?: EntityDefinition;
  /** The key segment as written (`$count` included). */
  key?: string;
  keyReference?: string;
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
 * A token in the URL is what a lone request is refused for (api/auth/authenticate.ts), before its
 * role or route is looked at. With mock authentication, which reads no token, it is dropped
 * instead: either way it never reaches the queued job.
 */
function refuseQueryToken(request: BatchRequest, ctx: StepContext): void {
  if (ctx.queryTokensRefused && Object.hasOwn(queryOf(request.url), QUERY_TOKEN)) {
    throw unauthorized(
      'Send the access token in the Authorization header, not in the query string.',
      'invalid_request',
    );
  }
}

/** The route, key and query a request's URL names; a `$s1` URL names what s1 created. */
function targetOf(request: BatchRequest, ctx: StepContext): Target {
  const earlier = ctx.earlier;
  const url = request.url.replace(/^\//, '');
  const mark = url.indexOf('?');
  // A trailing slash is the same route, as Express's non-strict routing has it for a lone request.
  const path = (mark < 0 ? url : url.slice(0, mark)).replace(/\/$/, '');
  const query = queryOf(url);
  delete query[QUERY_TOKEN];
  // What the same request alone meets when no route matches (api/http/error-handler.ts).
  const noResource = () => notFound(`No resource at ${request.method} /${path}.`);
  if (request.urlReference !== undefined) {
    const creator = earlier.get(request.urlReference)!;
    const creatorPath = creator.url.replace(/^\//, '').split('?')[0]!;
    const entity = readableByRoute(creatorPath);
    if (!entity) throw failedDependency(`Request '${creator.id}' creates no entity, so '${request.id}' was not run.`);
    return { route: entity.route, entity, keyReference: request.urlReference, query };
  }
  const segments = path.split('/').map(decodeSegment);
  const [route, key] = segments as [string, string | undefined];
  // The entity routes and /Activities only: no admin route, no /Export, no /Commands in a batch.
  if (SERVICE_ROUTES.has(route)) {
    throw notFound(
      `No resource at ${request.method} /${path}: a batch reaches the entity routes and /Activities only.`,
    );
  }
  if (segments.length > 2 || !route) throw noResource();
  const entity = readableByRoute(route);
  return { route, ...(entity ? { entity } : {}), ...(key === undefined ? {} : { key }), query };
}

function mediaTypeOf(request: BatchRequest): string {
  return (request.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

function requireMediaType(request: BatchRequest, expected: string, verbs: string): void {
  if (mediaTypeOf(request) !== expected) throw unsupportedMediaType(`${verbs} take ${expected}.`);
}

function writeStep(request: BatchRequest, target: Target, ctx: StepContext): BatchStep['write'] {
  const method = request.method;
  const entity = writableEntityOf(target.route);
  const keyed = target.key !== undefined || target.keyReference !== undefined;
  // What the same request alone meets: no such route.
  if (!entity || (method === 'POST') === keyed) {
    throw notFound(`No resource at ${method} /${request.url.replace(/^\//, '').split('?')[0]!.replace(/\/$/, '')}.`);
  }
  if (request.body !== undefined && jsonByteLengthExceeds(request.body, MAX_REQUEST_BODY_BYTES)) {
    throw requestBodyTooLarge();
  }
  const key = target.key === undefined ? undefined : keyOf(entity, target.key);
  const name: CommandName = { POST: 'create', PUT: 'replace', PATCH: 'patch', DELETE: 'delete' }[
    method as 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  ] as CommandName;
  const ifMatch = name === 'create' ? undefined : request.headers['if-match'];
  const base = {
    name,
    entity: entity.name,
    ...(key === undefined ? {} : { key }),
    ...(target.keyReference === undefined ? {} : { keyReference: target.keyReference }),
    ...(ifMatch === undefined ? {} : { ifMatch }),
    representation: prefersRepresentation(request.headers.prefer),
    ...(request.bodyReferences ? { references: true as const } : {}),
  };
  switch (name) {
    case 'create':
    case 'replace':
      requireMediaType(request, 'application/json', 'POST and PUT');
      return { ...base, body: parseWriteBody(entity, request.body, ctx.geometryLimits, key) };
    case 'patch':
      requireMediaType(request, 'application/json-patch+json', 'PATCH requests');
      return { ...base, patch: parsePatch(entity, request.body, ctx.patchLimits, ctx.geometryLimits) };
    default:
      return base;
  }
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
    if (!policyAllows(POLICY.default, ctx.caller.roles))
      throw forbidden(`This action needs the role ${POLICY.default.join(' or ')}.`);
    if (request.headers['idempotency-key'] !== undefined) {
      throw badRequest('Idempotency-Key applies to a whole batch: send it with POST /$batch, not inside a request.');
    }
    const target = targetOf(request, ctx);
    if (!METHODS.includes(request.method)) {
      throw methodNotAllowed(`${request.method} is not a method of /${target.route}.`, METHODS);
    }
    if (request.method === 'GET') {
      return {
        ...step,
        read: {
          route: target.route,
          ...(target.key === undefined ? {} : { key: target.key }),
          ...(target.keyReference === undefined ? {} : { keyReference: target.keyReference }),
          query: target.query,
          ...(request.headers['if-none-match'] === undefined ? {} : { ifNoneMatch: request.headers['if-none-match'] }),
        },
      };
    }
    return { ...step, write: writeStep(request, target, ctx) };
  } catch (err) {
    if (err instanceof DomainError) return { ...step, failure: err.toFailure() };
    throw err;
  }
}
