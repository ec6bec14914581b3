import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden, assertUnauthorized } from '../support/auth';

/**
 * The policy matrix of spec §5 on every route family, with tokens verified through OIDC discovery
 * (AUTH_ISSUER_BASE_URL): no token, a token without a role, User, Admin.
 */

let idp: IdentityProvider;
let stack: Stack;
const tokens: Record<'none' | 'User' | 'Admin', string> = { none: '', User: '', Admin: '' };

test.before(async () => {
  idp = await startIdentityProvider();
  stack = await startStack({ workers: [], env: idp.env.discovery });
  tokens.none = await idp.token({ claims: { sub: 'nobody' } });
  tokens.User = await idp.token({ claims: { sub: 'ursula', roles: ['User'] } });
  tokens.Admin = await idp.token({ claims: { sub: 'ada', roles: 'Admin' } });
});
test.after.always(async () => {
  await stack?.close();
  await idp?.close();
});

type Caller = keyof typeof tokens;
type Expect = 'ok' | 403;

interface RouteCase {
  family: string;
  method: string;
  path: string;
  expect: Record<Caller, Expect>;
}

const DEFAULT_POLICY = { none: 403, User: 'ok', Admin: 'ok' } as const;
const ADMIN_ONLY = { none: 403, User: 403, Admin: 'ok' } as const;

const ROUTES: RouteCase[] = [
  { family: 'entity read', method: 'GET', path: '/Schemes', expect: DEFAULT_POLICY },
  { family: 'entity keyed read', method: 'GET', path: '/Countries/AAAAAA', expect: DEFAULT_POLICY },
  { family: 'entity count', method: 'GET', path: '/Schemes/$count', expect: DEFAULT_POLICY },
  { family: 'Roles', method: 'GET', path: '/Roles', expect: { none: 'ok', User: 'ok', Admin: 'ok' } },
  { family: 'Roles/Available', method: 'GET', path: '/Roles/Available', expect: DEFAULT_POLICY },
  { family: 'Roles/Assignments', method: 'GET', path: '/Roles/Assignments', expect: ADMIN_ONLY },
  { family: 'Jobs', method: 'GET', path: '/Jobs', expect: ADMIN_ONLY },
  { family: 'Jobs one', method: 'GET', path: '/Jobs/views/1', expect: ADMIN_ONLY },
  { family: 'Bull Board', method: 'GET', path: '/admin/queues', expect: ADMIN_ONLY },
  { family: 'Bull Board API', method: 'GET', path: '/admin/queues/api/queues', expect: ADMIN_ONLY },
  { family: 'Export', method: 'GET', path: '/Export/Schemes', expect: DEFAULT_POLICY },
];

/** "ok" means the policy let the request through: whatever the route answers, it is not 401/403. */
function passed(status: number): boolean {
  return status !== 401 && status !== 403;
}

for (const route of ROUTES) {
  test(`${route.family}: ${route.method} ${route.path} — 401 without a token, policy for each caller`, async (t) => {
    assertUnauthorized(t, await stack.request(route.method, route.path));
    for (const caller of Object.keys(tokens) as Caller[]) {
      const res = await stack.request(route.method, route.path, { headers: bearer(tokens[caller]) });
      if (route.expect[caller] === 403) assertForbidden(t, res);
      else t.true(passed(res.status), `${caller}: ${res.status} ${res.text.slice(0, 200)}`);
    }
  });
}

test('entity writes sit behind the default policy, before any body is parsed', async (t) => {
  const body = { raw: '{"SchemeName": ', headers: { 'content-type': 'application/json' } };
  // Malformed JSON: an unauthenticated caller gets 401, not a parse error.
  assertUnauthorized(t, await stack.request('POST', '/Schemes', body));
  for (const [method, path] of [
    ['POST', '/Schemes'],
    ['PATCH', '/Schemes/1'],
    ['PUT', '/Schemes/1'],
    ['DELETE', '/Schemes/1'],
  ] as const) {
    assertUnauthorized(t, await stack.request(method, path, { raw: '{}' }));
    assertForbidden(
      t,
      await stack.request(method, path, {
        raw: '{}',
        headers: { ...bearer(tokens.none), 'content-type': 'application/json' },
      }),
    );
  }
});

test('Jobs actions are AdminOnly too', async (t) => {
  assertUnauthorized(t, await stack.request('POST', '/Jobs/RebuildViews'));
  assertForbidden(t, await stack.request('POST', '/Jobs/RebuildViews', { headers: bearer(tokens.User) }));
  assertForbidden(t, await stack.request('POST', '/Jobs/views/1/retry', { headers: bearer(tokens.User) }));
  assertForbidden(
    t,
    await stack.request('POST', '/Roles/Assignments', {
      body: { Subject: 'ursula', Role: 'Admin' },
      headers: bearer(tokens.User),
    }),
  );
});

test('Admin reaches the real answers: Bull Board lists every queue, /Jobs answers a list', async (t) => {
  const board = await stack.get('/admin/queues/api/queues', bearer(tokens.Admin));
  t.is(board.status, 200, board.text);
  const names = (board.body as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
  t.deepEqual(names, ['commands', 'maintenance', 'notifications', 'views', 'webhooks']);
  const page = await stack.get('/admin/queues', bearer(tokens.Admin));
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  const jobs = await stack.get('/Jobs', bearer(tokens.Admin));
  t.is(jobs.status, 200);
  t.true(Array.isArray(jobs.body));
});

test('without the Bull Board login configured, a browser without a token gets the 401 problem as before', async (t) => {
  const res = await fetch(`${stack.baseUrl}/admin/queues`, { headers: { accept: 'text/html' }, redirect: 'manual' });
  t.is(res.status, 401);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.deepEqual(res.headers.getSetCookie(), []);
});

test('a caller without a role sees who it is on /Roles', async (t) => {
  const res = await stack.get('/Roles', bearer(tokens.none));
  t.deepEqual(res.body, { Subject: 'nobody', Roles: [] });
});

test('unknown routes still need a token, and a role', async (t) => {
  assertUnauthorized(t, await stack.get('/NoSuchThing'));
  assertForbidden(t, await stack.get('/NoSuchThing', bearer(tokens.none)));
  t.is((await stack.get('/NoSuchThing', bearer(tokens.User))).status, 404);
});

test('health needs no token', async (t) => {
  t.is((await stack.get('/health/live')).status, 200);
  t.is((await stack.get('/health/ready')).status, 200);
  t.is((await stack.get('/health/live', { authorization: 'Bearer garbage' })).status, 200);
});
