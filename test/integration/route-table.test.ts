import test from 'ava';
import { labelOf, type Route } from '../../api/routes/route';
import { BULL_BOARD_PATH, ROUTES } from '../../api/routes/route-table';
import { DOCS_INIT_FILE } from '../../api/openapi/docs-page';
import { encodeId } from '../../domain/ids/id-codec';
import { startStack, type Stack } from '../support/stack';

/**
 * The running service against its route table (api/routes/route-table.ts): every route of the
 * table is served (none answers the "No resource" 404 of an unknown path), and each one's label is
 * what `/metrics` counts it under. An Express route outside the table cannot exist: the app mounts
 * no router of its own (api/app.ts), and an unknown path is the 404 asked for last.
 */

let stack: Stack;
test.before(async () => {
  stack = await startStack({ env: { METRICS_ENABLED: 'true' } });
});
test.after.always(async () => {
  await stack?.close();
});

/** A path the route answers: an entity key a real Id, an asset a real file, other variables made up. */
function pathOf(route: Route): string {
  const filled = labelOf(route).replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'key' && route.entity) return encodeId(route.entity.name, 1);
    if (name === 'asset') return DOCS_INIT_FILE;
    if (name === 'queue') return 'commands';
    return `${name}1`;
  });
  return route.mount ? `${filled}/api/queues` : filled;
}

test('every route of the table answers, none with the 404 of an unknown path, and is counted under its label', async (t) => {
  const asked = new Set<string>();
  for (const route of ROUTES) {
    // Bull Board's OIDC login is not configured here (test/integration/bull-board-login.test.ts has it).
    if (route.pattern.startsWith(`${BULL_BOARD_PATH}/auth/`)) continue;
    const methods = route.mount ? ['GET'] : Object.keys(route.operations);
    for (const method of methods) {
      const path = pathOf(route);
      const operation = route.operations[method as 'GET'];
      const headers: Record<string, string> = operation?.accepts ? { 'content-type': operation.accepts[0]! } : {};
      // The change feed never ends: HEAD opens and closes it.
      const verb = route.pattern === '/Changes' ? 'HEAD' : method;
      const res = await stack.request(
        verb,
        path,
        method === 'GET' || method === 'DELETE' ? { headers } : { headers, raw: '{}' },
      );
      // A problem's detail, or under /odata the OData error's message.
      const body = res.body as { detail?: string; error?: { message?: string } } | undefined;
      const detail = body?.detail ?? body?.error?.message ?? '';
      t.false(res.status === 404 && detail.startsWith('No resource at'), `${verb} ${path}: ${res.status} ${detail}`);
      asked.add(labelOf(route));
    }
  }
  // The unknown path itself, for contrast.
  const unknown = await stack.get('/NoSuchRoute/1/2');
  t.is(unknown.status, 404);
  t.regex((unknown.body as { detail: string }).detail, /^No resource at GET \/NoSuchRoute\/1\/2\.$/);

  const scrape = await stack.get('/metrics');
  const counted = new Set(
    [...scrape.text.matchAll(/^http_request_duration_seconds_count\{[^}]*route="([^"]+)"/gm)].map((m) => m[1]!),
  );
  for (const label of asked) t.true(counted.has(label), `${label} is a label of http_request_duration_seconds`);
  t.true(counted.has('unmatched'));
});
