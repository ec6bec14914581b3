import type { AddressInfo } from 'node:net';
import test from 'ava';
import express from 'express';
import { stepOf } from '../../api/batch/batch-request-checks';
import { errorHandler, notFoundHandler } from '../../api/http/error-handler';
import { UNMATCHED, labeler, routeLabel } from '../../api/http/route-label';
import { buildOpenApiDocument, describedPaths, pathsOf } from '../../api/openapi/document';
import { dispatcher } from '../../api/routes/dispatch';
import { labelOf, type HandlerName, type Route } from '../../api/routes/route';
import { routeMatcher, TABLE } from '../../api/routes/route-match';
import { ODATA_ROOT, ROOT, ROUTES } from '../../api/routes/route-table';
import { odataBatchReadOf, odataBatchWriteOf } from '../../api/odata/odata-batch-read';
import { DEFAULT_PATCH_LIMITS } from '../../domain/writes/json-patch';
import { encodeId } from '../../domain/ids/id-codec';
import { POLICY } from '../../domain/auth/roles';

/**
 * One route table (api/routes/route-table.ts) drives the OpenAPI paths, the metric labels, `$batch`
 * and Express dispatch: each is checked against it here, and a route added to it shows in all four.
 * (test/integration/route-table.test.ts asks the running service for every route of it.)
 */

const settings = { maxTop: 1000, batchMaxRequests: 1000 };

/** A path a route answers: its variables filled in (a real Id for an entity key), under a mount a sub-path. */
function pathOf(route: Route): string {
  const filled = labelOf(route).replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'key' && route.entity ? encodeId(route.entity.name, 1) : `${name}1`,
  );
  return route.mount ? `${filled}/api/queues` : filled;
}

/** The routes the OpenAPI document describes: the root's (`/odata` is described by its `$metadata`). */
const DOCUMENTED = ROUTES.filter((route) => route.root === ROOT);

/** A route no one serves yet, as an engineer would add it. */
const ADDED: Route = {
  root: '',
  pattern: '/Added/{id}',
  policy: POLICY.default,
  operations: { GET: { handler: 'added' as HandlerName } },
};

test('the OpenAPI paths are the route table, entry for entry and in its order', (t) => {
  t.true(ROUTES.some((route) => route.root === '/odata'));
  const paths = buildOpenApiDocument(settings).paths as Record<string, Record<string, unknown>>;
  t.deepEqual(Object.keys(paths), DOCUMENTED.map(labelOf));
  for (const route of DOCUMENTED) {
    const batch = Object.values(route.operations).some((operation) => operation.batch);
    for (const [method, operation] of Object.entries(paths[labelOf(route)]!)) {
      if (method !== 'parameters')
        t.is((operation as { 'x-batch'?: true })['x-batch'], batch || undefined, labelOf(route));
    }
  }
});

test('a table route without a description, a description without a route, or other methods stop the document', (t) => {
  const described = describedPaths(settings);
  t.throws(() => pathsOf([...DOCUMENTED, ADDED], described), {
    message: /the route \/Added\/\{id\} has no OpenAPI description/,
  });
  t.throws(() => pathsOf(DOCUMENTED.slice(1), described), {
    message: /described but not in the route table: \/Schemes$/,
  });
  const schemes = DOCUMENTED[0]!;
  const withDelete = {
    ...schemes,
    operations: { ...schemes.operations, DELETE: { handler: 'deleteEntity' as const } },
  };
  t.throws(() => pathsOf([withDelete, ...DOCUMENTED.slice(1)], described), {
    message: /^\/Schemes is described for get, post/,
  });
  t.notThrows(() => pathsOf([...DOCUMENTED, ADDED], { ...described, '/Added/{id}': { get: { responses: {} } } }));
});

test('every route is the metric label of its own paths, and only a table route gets a label', (t) => {
  for (const route of ROUTES) {
    const path = pathOf(route);
    t.is(routeLabel(path), labelOf(route), path);
    t.is(routeLabel(`${path}/?x=1`), labelOf(route), path);
  }
  t.is(routeLabel('/Added/7'), UNMATCHED);
  t.is(labeler(routeMatcher([...ROUTES, ADDED]))('/Added/7'), '/Added/{id}');
});

test('$batch reaches exactly the routes with a batch step, resolved in the same table', (t) => {
  const context = {
    caller: { subject: 'u', roles: ['User'] },
    patchLimits: DEFAULT_PATCH_LIMITS,
    geometryLimits: { maxLength: 1_000_000, maxVertices: 100_000, maxDepth: 3 },
    earlier: new Map(),
    queryTokensRefused: false,
  };
  // `/odata/$batch` resolves its requests under `/odata` (DESIGN §17), with /odata's builders.
  const odataRoot = {
    path: ODATA_ROOT,
    readOf: odataBatchReadOf('http://localhost/odata', 1000),
    writeOf: odataBatchWriteOf('http://localhost/odata'),
  };
  let batchable = 0;
  for (const route of ROUTES) {
    for (const [method, operation] of Object.entries(route.operations)) {
      const odata = route.root === ODATA_ROOT;
      // Relative to the batch's root: `Schemes` in an `/odata` batch is `/odata/Schemes`.
      const url = pathOf(route).slice(route.root.length + 1);
      const headers: Record<string, string> = operation.accepts ? { 'content-type': operation.accepts[0]! } : {};
      const request = { index: 0, id: 'r', method, url, dependsOn: [], headers, body: {} };
      const step = stepOf(request, odata ? { ...context, root: odataRoot } : context);
      const where = `${method} ${route.root}/${url}: ${JSON.stringify(step.failure)}`;
      if (odata && url !== '') {
        // The root's batch does not reach into `/odata` (nor the reverse).
        const fromRoot = stepOf({ ...request, url: `odata/${url}` }, context);
        t.is(fromRoot.failure?.kind, 'NotFound', `root batch: ${where}`);
      }
      if (operation.batch) {
        batchable++;
        // Reached: a read or a write step, or its own answer (a body {} that is no valid entity or patch is a 400).
        t.true(step.failure === undefined || ['Validation', 'BadRequest'].includes(step.failure.kind), where);
        t.is(step.read ? 'read' : (step.write?.name ?? operation.batch), operation.batch, where);
      } else {
        t.is(step.failure?.kind, 'NotFound', where);
      }
    }
  }
  t.true(batchable > 0);
  // A read model refuses writes with 405 in a batch as alone.
  const refused = stepOf(
    { index: 0, id: 'r', method: 'POST', url: 'Activities', dependsOn: [], headers: {}, body: {} },
    context,
  );
  t.like(refused.failure, { kind: 'MethodNotAllowed', allow: ['GET'] });
  t.is(TABLE.resolve('GET', '/Added/7').kind, 'none');
});

test("$batch: a request meets its route's own policy, as it would alone", (t) => {
  // The entity routes' policy is the default, which a batch asks first; a route of the table with
  // another policy is guarded in a batch as dispatch guards it.
  const guarded = routeMatcher(
    ROUTES.map((route) => (labelOf(route) === '/Schemes' ? { ...route, policy: POLICY.adminOnly } : route)),
  );
  const context = (roles: string[]) => ({
    caller: { subject: 'u', roles },
    patchLimits: DEFAULT_PATCH_LIMITS,
    geometryLimits: { maxLength: 1_000_000, maxVertices: 100_000, maxDepth: 3 },
    earlier: new Map(),
    queryTokensRefused: false,
    routes: guarded,
  });
  const request = { index: 0, id: 'r', method: 'GET', url: 'Schemes', dependsOn: [], headers: {}, body: undefined };
  t.like(stepOf(request, context(['User'])).failure, {
    kind: 'Forbidden',
    errors: ['This action needs the role Admin.'],
  });
  t.is(stepOf(request, context(['Admin'])).read?.route, 'Schemes');
  t.is(stepOf({ ...request, url: 'Countries' }, context(['User'])).read?.route, 'Countries');
  // Every route a batch reaches today has the default policy, so nothing changes for them.
  for (const route of ROUTES) {
    if (Object.values(route.operations).some((operation) => operation.batch)) t.is(route.policy, POLICY.default);
  }
});

test('Express serves a route added to the table through the table, under its policy', async (t) => {
  const routes = dispatcher([...ROUTES, ADDED], {
    ['added' as HandlerName]: (req: express.Request, res: express.Response) => void res.json({ id: req.params.id }),
  });
  const app = express();
  app.use((req, _res, next) => {
    req.caller = { subject: 'u', roles: req.get('x-roles')?.split(',') ?? [] };
    next();
  });
  app.use(routes.authenticated, notFoundHandler, errorHandler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const added = await fetch(`${base}/Added/7`, { headers: { 'x-roles': 'User' } });
  t.is(added.status, 200);
  t.deepEqual(await added.json(), { id: '7' });
  t.is((await fetch(`${base}/Added/7`)).status, 403);
  const wrongMethod = await fetch(`${base}/Added/7`, { method: 'DELETE', headers: { 'x-roles': 'User' } });
  t.is(wrongMethod.status, 404);
  const options = await fetch(`${base}/Added/7`, { method: 'OPTIONS', headers: { 'x-roles': 'User' } });
  t.is(options.headers.get('allow'), 'GET, HEAD');
  // A route the table does not hold is no route, whatever handler exists.
  t.is((await fetch(`${base}/Other/7`, { headers: { 'x-roles': 'User' } })).status, 404);
});
