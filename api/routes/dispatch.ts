import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { POLICY, type Policy } from '../../domain/auth/roles';
import { badRequest, methodNotAllowed, unauthorized } from '../../domain/errors/domain-error';
import { tracing } from '../../infra/tracing/tracing';
import { requireRole } from '../auth/require-role';
import type { HandlerName, Route, RoutePolicy } from './route';
import { allowOf, labelOf } from './route';
import { routeMatcher, type Resolution } from './route-match';

/**
 * Express dispatch from the route table: a request's route is found once (route-match.ts), and the
 * stages of the app's middleware (api/app.ts) serve it where its policy says — open routes before
 * authentication, `$batch` before the JSON body parser, the rest after it. Unknown paths get the
 * policy of their area (admin under `/Jobs`, `/Subscriptions`, …, the default elsewhere), then 404.
 */

export type RouteHandler = RequestHandler | readonly RequestHandler[];

/** The handlers a running app supplies; a route whose handler is absent (e.g. `/metrics` off) is not served. */
export type RouteHandlers = Partial<Record<HandlerName, RouteHandler>>;

export interface Dispatcher {
  /** Routes open without a token: before authentication. */
  open: RequestHandler;
  /** Routes that read their own body (`$batch`): after authentication and the rate limit, before the body parser. */
  ownBody: RequestHandler;
  /** Everything else, and every unknown path (its area's policy, then 400 for a malformed segment or next() to the 404). */
  authenticated: RequestHandler;
}

/** A request's resolution, kept on the request: the three stages and the handler read it (a WeakMap cost 3 lookups a request). */
const RESOLUTION = Symbol('resolution');
type Resolved = Request & { [RESOLUTION]?: Resolution };

/** The route a request was dispatched to (for handlers serving many routes, e.g. every entity set). */
export function routeOf(req: Request): Route {
  const resolution = (req as Resolved)[RESOLUTION];
  if (resolution?.kind !== 'operation') throw new Error('the request was not dispatched from the route table');
  return resolution.route;
}

const NOT_DISPATCHED: Resolution = { kind: 'none', badEncoding: false };

function handlerNames(route: Route): HandlerName[] {
  return route.mount ? [route.mount] : Object.values(route.operations).map((operation) => operation.handler);
}

/** Runs handlers in turn as Express would; a handler passing on (`next()`, `next('route')`) leaves the path unmatched. */
function run(chain: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const next = (err?: unknown): void => {
    if (err !== undefined && err !== null && err !== 'route') return done(err);
    if (err === 'route') return done();
    const handler = chain[index++];
    if (!handler) return done();
    try {
      const result = handler(req, res, next) as unknown;
      if (result instanceof Promise) result.then(undefined, next);
    } catch (thrown) {
      next(thrown);
    }
  };
  next();
}

/** Admin-only areas: the literal stem of every admin route (`/Jobs` of `/Jobs/{queue}/{id}`). */
function adminStems(routes: readonly Route[]): string[][] {
  return routes
    .filter((route) => route.policy === POLICY.adminOnly)
    .map((route) => {
      const segments = labelOf(route).split('/').slice(1);
      const variable = segments.findIndex((segment) => segment.startsWith('{'));
      return (variable < 0 ? segments : segments.slice(0, variable)).map((segment) => segment.toLowerCase());
    });
}

/** Sends the `OPTIONS` answer Express gave: 200, `Allow`, and the same list as the text body. */
function sendOptions(res: Response, routes: readonly Route[]): void {
  const allow = allowOf(routes).join(', ');
  res.setHeader('Allow', allow);
  res.setHeader('Content-Length', Buffer.byteLength(allow));
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.status(200).end(allow);
}

/** Serves a mount (Bull Board) as `app.use(path, handler)` did: its path made relative to the mount point. */
function mounted(handler: RequestHandler, depth: number): RequestHandler {
  return (req, res, next) => {
    const { url, baseUrl } = req;
    const removed = req.path
      .split('/')
      .slice(0, depth + 1)
      .join('/');
    req.baseUrl = `${baseUrl}${removed}`;
    const rest = url.slice(removed.length);
    req.url = rest.startsWith('/') ? rest : `/${rest}`;
    handler(req, res, (err?: unknown) => {
      req.url = url;
      req.baseUrl = baseUrl;
      next(err);
    });
  };
}

export function dispatcher(routes: readonly Route[], handlers: RouteHandlers): Dispatcher {
  const served = routes.filter((route) => handlerNames(route).every((name) => handlers[name] !== undefined));
  const matcher = routeMatcher(served);
  const stems = adminStems(routes);
  const guards = new Map<Policy, RequestHandler>();
  const guardOf = (policy: RoutePolicy): RequestHandler[] => {
    if (policy === 'none') return [];
    if (policy === 'any') return [anyCaller];
    if (!guards.has(policy)) guards.set(policy, requireRole(policy));
    return [guards.get(policy)!];
  };
  const chainOf = (name: HandlerName, route: Route): RequestHandler[] => {
    const handler = handlers[name]!;
    const chain: RequestHandler[] = Array.isArray(handler) ? [...handler] : [handler as RequestHandler];
    if (route.mount === undefined) return chain;
    const depth = labelOf(route).split('/').length - 1;
    return [...chain.slice(0, -1), mounted(chain[chain.length - 1]!, depth)];
  };
  /** Per route and handler, its policy's guard then the handler: built once, not per request. */
  const servings = new Map<Route, Map<HandlerName, { label: string; chain: readonly RequestHandler[] }>>();
  const servingOf = (route: Route, name: HandlerName) => {
    let byName = servings.get(route);
    if (!byName) servings.set(route, (byName = new Map()));
    let serving = byName.get(name);
    if (!serving) {
      serving = { label: labelOf(route), chain: [...guardOf(route.policy), ...chainOf(name, route)] };
      byName.set(name, serving);
    }
    return serving;
  };

  function resolutionOf(req: Request): Resolution {
    let resolution = (req as Resolved)[RESOLUTION];
    if (!resolution) {
      resolution = matcher.resolve(req.method, req.path);
      (req as Resolved)[RESOLUTION] = resolution;
    }
    return resolution;
  }

  /** Serves a resolved route; a handler that passes the request on leaves it unmatched. */
  function serve(req: Request, res: Response, next: NextFunction, resolution: Resolution): void {
    if (resolution.kind !== 'operation') return next();
    const { route, operation, params } = resolution;
    req.params = params;
    const { label, chain } = servingOf(route, operation.handler);
    tracing().nameRoute(label);
    run(chain, req, res, (err?: unknown) => {
      if (err === undefined) (req as Resolved)[RESOLUTION] = NOT_DISPATCHED;
      next(err);
    });
  }

  /** The policy of a path no route answers for its method: its area's. */
  function areaGuard(req: Request): RequestHandler[] {
    const segments = req.path
      .split('/')
      .slice(1)
      .map((segment) => segment.toLowerCase());
    const admin = stems.some((stem) => stem.every((segment, i) => segments[i] === segment));
    return guardOf(admin ? POLICY.adminOnly : POLICY.default);
  }

  const open: RequestHandler = (req, res, next) => {
    const resolution = resolutionOf(req);
    if (resolution.kind === 'operation' && resolution.route.policy === 'none') return serve(req, res, next, resolution);
    if (resolution.kind === 'options' && resolution.routes.every((route) => route.policy === 'none')) {
      return sendOptions(res, resolution.routes);
    }
    next();
  };

  const ownBody: RequestHandler = (req, res, next) => {
    const resolution = resolutionOf(req);
    if (resolution.kind === 'operation' && resolution.route.ownBody) return serve(req, res, next, resolution);
    if (resolution.kind === 'refused' && resolution.route.ownBody) return refuse(resolution.route, next);
    next();
  };

  const authenticated: RequestHandler = (req, res, next) => {
    const resolution = resolutionOf(req);
    switch (resolution.kind) {
      case 'operation':
        if (resolution.route.policy !== 'none') return serve(req, res, next, resolution);
        break;
      case 'refused':
        return run(guardOf(resolution.route.policy), req, res, (err?: unknown) =>
          err === undefined ? refuse(resolution.route, next) : next(err),
        );
      case 'options':
        return run(guardOf(resolution.routes[0]!.policy), req, res, (err?: unknown) =>
          err === undefined ? sendOptions(res, resolution.routes) : next(err),
        );
      default:
    }
    const malformed = resolution.kind === 'none' && resolution.badEncoding;
    run(areaGuard(req), req, res, (err?: unknown) => {
      if (err !== undefined) return next(err);
      next(malformed ? badRequest('A path segment is not valid percent-encoding.') : undefined);
    });
  };

  return { open, ownBody, authenticated };
}

function refuse(route: Route, next: NextFunction): void {
  next(methodNotAllowed(route.refuse!.detail, Object.keys(route.operations)));
}

/** A route for any authenticated caller, role or not. */
const anyCaller: RequestHandler = (req, _res, next) => {
  next(req.caller ? undefined : unauthorized('A bearer token is required.'));
};
