import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden, assertUnauthorized } from '../support/auth';
import { SESSION_SECRET, startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { cookieSeal } from '../../api/auth/login/sealed-cookie';
import { SESSION_COOKIE, TRANSACTION_COOKIE } from '../../api/auth/login/bull-board-login';

/**
 * DESIGN §15 at the HTTP level (the browser flow is bull-board-login-browser.test.ts): Bull Board
 * behind the OIDC login of a real issuer (oidc-provider at `localhost`), the API at 127.0.0.1,
 * bearer tokens from another identity provider judged as everywhere else.
 */

let idp: IdentityProvider;
let issuer: OidcIssuer;
let stack: Stack;
test.before(async () => {
  idp = await startIdentityProvider();
  issuer = await startOidcIssuer();
  stack = await startStack({ workers: [], env: idp.env.discovery, envFor: (origin) => issuer.register(origin) });
});
test.after.always(async () => {
  await stack?.close();
  await issuer?.close();
  await idp?.close();
});

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const sessions = cookieSeal(SESSION_SECRET, 'session');

const sessionCookie = (value: string) => ({ cookie: `${SESSION_COOKIE}=${value}` });

async function sessionOf(sub: string, roles: string[], ttlSeconds = 600, now?: number): Promise<string> {
  return sessions.seal({ sub, roles, op: issuer.url }, ttlSeconds, now);
}

function setCookies(res: HttpResult): string[] {
  return res.headers.getSetCookie();
}

/** The login's first step: the redirect to the issuer and the transaction cookie it sets. */
async function startLogin(): Promise<{ location: URL; transaction: string }> {
  const res = await fetch(`${stack.baseUrl}/admin/queues`, { headers: HTML, redirect: 'manual' });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${TRANSACTION_COOKIE}=`));
  if (res.status !== 302 || !cookie) throw new Error(`no login started: ${res.status}`);
  return { location: new URL(res.headers.get('location')!), transaction: cookie.split(';')[0]! };
}

function assertProblem(t: ExecutionContext, res: HttpResult, status: number): void {
  t.is(res.status, status, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.like(res.body as object, { type: 'about:blank', status });
}

test('a browser without token or session is sent to the issuer: code flow with PKCE S256, state and nonce', async (t) => {
  const res = await fetch(`${stack.baseUrl}/admin/queues/queue/views?status=failed`, {
    headers: HTML,
    redirect: 'manual',
  });
  t.is(res.status, 302);
  const location = new URL(res.headers.get('location')!);
  t.is(location.origin, issuer.url);
  const q = location.searchParams;
  t.is(q.get('response_type'), 'code');
  t.is(q.get('client_id'), 'bull-board');
  t.is(q.get('redirect_uri'), `${stack.baseUrl}/admin/queues/auth/callback`);
  t.is(q.get('code_challenge_method'), 'S256');
  t.regex(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  t.truthy(q.get('state'));
  t.truthy(q.get('nonce'));
  t.deepEqual(q.get('scope')?.split(' ').sort(), ['openid', 'profile', 'roles']);
  const [cookie] = res.headers.getSetCookie();
  t.regex(cookie ?? '', new RegExp(`^${TRANSACTION_COOKIE}=`));
  // Lax: the browser must send it on the navigation back from the issuer, another site.
  t.regex(cookie ?? '', /; Path=\/admin\/queues\/auth(;|$)/);
  t.regex(cookie ?? '', /; HttpOnly/);
  t.regex(cookie ?? '', /; SameSite=Lax/);
  t.notRegex(cookie ?? '', /; Secure/); // the public URL is http here
  // The transaction is sealed: the verifier and the nonce are not readable in it.
  t.false(cookie!.includes(q.get('state')!));
});

test('requests that are not a browser page get the 401 problem of today', async (t) => {
  assertUnauthorized(t, await stack.get('/admin/queues'));
  assertUnauthorized(t, await stack.get('/admin/queues/api/queues', { accept: 'application/json' }));
  assertUnauthorized(t, await stack.request('POST', '/admin/queues/api/queues/views/pause', { headers: HTML }));
  // Everything outside Bull Board is untouched by the login.
  assertUnauthorized(t, await stack.get('/Schemes', HTML));
  assertUnauthorized(t, await stack.get('/Jobs', HTML));
});

test('a bearer token is judged by itself, as today, even from a browser', async (t) => {
  assertUnauthorized(t, await stack.get('/admin/queues', { ...HTML, ...bearer('not-a-jwt') }), 'invalid_token');
  const user = await idp.token({ claims: { sub: 'ursula', roles: ['User'] } });
  assertForbidden(t, await stack.get('/admin/queues', { ...HTML, ...bearer(user) }));
  const admin = await idp.token({ claims: { sub: 'ada', roles: ['Admin'] } });
  const page = await stack.get('/admin/queues', { ...HTML, ...bearer(admin) });
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  // A token wins over a session: an Admin session does not rescue a bad token.
  const session = await sessionOf('ada', ['Admin']);
  assertUnauthorized(
    t,
    await stack.get('/admin/queues/api/queues', { ...bearer('not-a-jwt'), ...sessionCookie(session) }),
    'invalid_token',
  );
});

test('an Admin session opens Bull Board and its API', async (t) => {
  const session = await sessionOf('ada', ['Admin']);
  const api = await stack.get('/admin/queues/api/queues', sessionCookie(session));
  t.is(api.status, 200, api.text);
  const names = (api.body as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
  t.deepEqual(names, ['commands', 'maintenance', 'notifications', 'views', 'webhooks']);
  const page = await stack.get('/admin/queues', { ...HTML, ...sessionCookie(session) });
  t.is(page.status, 200);
  t.regex(page.text, /\/admin\/queues\/auth\/logout/); // the board's "Log out" link
  // The session is Bull Board's only: no other route takes it.
  assertUnauthorized(t, await stack.get('/Jobs', sessionCookie(session)));
});

test('a User session: a 403 page for the browser, the 403 problem for its scripts', async (t) => {
  const session = await sessionOf('ursula', ['User']);
  const page = await stack.get('/admin/queues', { ...HTML, ...sessionCookie(session) });
  t.is(page.status, 403);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(page.text, /logged in as <strong>ursula<\/strong>, who does not hold the Admin role/);
  t.regex(page.text, /href="\/admin\/queues\/auth\/logout"/);
  assertForbidden(t, await stack.get('/admin/queues/api/queues', sessionCookie(session)));
});

test('the subject on the 403 page is escaped', async (t) => {
  const session = await sessionOf('<script>alert(1)</script>', []);
  const page = await stack.get('/admin/queues', { ...HTML, ...sessionCookie(session) });
  t.is(page.status, 403);
  t.false(page.text.includes('<script>'));
  t.true(page.text.includes('&lt;script&gt;'));
});

test('roles granted by the service count for a session as for a token', async (t) => {
  await stack.knex('role_assignments').insert({ subject: 'granted-ada', role: 'Admin', created_by: 'test' });
  const session = await sessionOf('granted-ada', []);
  t.is((await stack.get('/admin/queues/api/queues', sessionCookie(session))).status, 200);
});

test('a tampered, expired, foreign or misused session cookie is refused', async (t) => {
  const valid = await sessionOf('ada', ['Admin']);
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const now = Math.floor(Date.now() / 1000);
  const bad = {
    tampered: flip(valid, valid.length - 10),
    tamperedHeader: flip(valid, 5),
    truncated: valid.slice(0, -1),
    expired: await sessionOf('ada', ['Admin'], 60, now - 3600),
    foreignSecret: await cookieSeal('another-secret-of-at-least-32-characters!', 'session').seal(
      { sub: 'ada', roles: ['Admin'], op: issuer.url },
      600,
    ),
    transactionAsSession: await cookieSeal(SESSION_SECRET, 'login-transaction').seal(
      { sub: 'ada', roles: ['Admin'], op: issuer.url },
      600,
    ),
    anotherIssuer: await sessions.seal({ sub: 'ada', roles: ['Admin'], op: 'https://old-issuer.example/' }, 600),
    garbage: 'not-a-session',
  };
  for (const [name, value] of Object.entries(bad)) {
    const api = await stack.get('/admin/queues/api/queues', sessionCookie(value));
    t.is(api.status, 401, name);
    const page = await fetch(`${stack.baseUrl}/admin/queues`, {
      headers: { ...HTML, ...sessionCookie(value) },
      redirect: 'manual',
    });
    t.is(page.status, 302, name);
    t.is(new URL(page.headers.get('location')!).origin, issuer.url, name);
    // The browser is told to forget the bad session.
    t.true(
      page.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`) && /Max-Age=0/.test(c)),
      name,
    );
  }
});

test('the callback without a login in progress: a 400 problem', async (t) => {
  const res = await stack.get('/admin/queues/auth/callback?code=abc&state=xyz', HTML);
  assertProblem(t, res, 400);
  t.regex((res.body as { detail: string }).detail, /No login is in progress/);
});

test('the callback with another state than the transaction: a 400 problem, and the transaction is spent', async (t) => {
  const { location, transaction } = await startLogin();
  const state = location.searchParams.get('state')!;
  const res = await stack.get(`/admin/queues/auth/callback?code=abc&state=${state}x&iss=${issuer.url}`, {
    cookie: transaction,
  });
  assertProblem(t, res, 400);
  t.regex((res.body as { detail: string }).detail, /state mismatch/);
  t.true(setCookies(res).some((c) => c.startsWith(`${TRANSACTION_COOKIE}=;`) && /Max-Age=0/.test(c)));
  // Two states are no state.
  const twice = await stack.get(`/admin/queues/auth/callback?state=${state}&state=${state}&code=abc`, {
    cookie: transaction,
  });
  assertProblem(t, twice, 400);
});

test('the callback with the right state but a forged code: a 400 problem from the issuer refusing it', async (t) => {
  const { location, transaction } = await startLogin();
  const state = location.searchParams.get('state')!;
  const res = await stack.get(
    `/admin/queues/auth/callback?code=forged&state=${state}&iss=${encodeURIComponent(issuer.url)}`,
    { cookie: transaction },
  );
  assertProblem(t, res, 400);
  t.regex((res.body as { detail: string }).detail, /refused to complete the login \(invalid_grant\)/);
  t.false(setCookies(res).some((c) => c.startsWith(`${SESSION_COOKIE}=`)));
});

test('the issuer reporting an error: a 400 problem naming its code, nothing else of it', async (t) => {
  const { location, transaction } = await startLogin();
  const state = location.searchParams.get('state')!;
  const res = await stack.get(
    `/admin/queues/auth/callback?error=access_denied&error_description=%3Cb%3Esecret%3C%2Fb%3E&state=${state}`,
    { cookie: transaction },
  );
  assertProblem(t, res, 400);
  t.regex((res.body as { detail: string }).detail, /\(access_denied\)/);
  t.false(res.text.includes('secret'));
});

const FIXED_DETAILS =
  /^(No login is in progress|This answer does not belong|The issuer did not log you in|The issuer refused to complete the login|The answer of the issuer could not be verified)/;

test('property: whatever query reaches the callback, with or without a login in progress, a 4xx problem that echoes nothing', async (t) => {
  const { location, transaction } = await startLogin();
  const state = location.searchParams.get('state')!;
  const token = fc.string({ maxLength: 40 });
  const param = fc.oneof(
    fc.tuple(fc.constantFrom('code', 'state', 'iss', 'error', 'error_description', 'session_state'), token),
    fc.tuple(fc.constant('state'), fc.constant(state)),
    fc.tuple(fc.constant('iss'), fc.constant(issuer.url)),
    fc.tuple(fc.string({ maxLength: 10 }), token),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(param, { maxLength: 6 }), fc.boolean(), async (params, withTransaction) => {
      const query = new URLSearchParams(params).toString();
      const res = await stack.get(
        `/admin/queues/auth/callback?${query}`,
        withTransaction ? { cookie: transaction } : {},
      );
      t.true(res.status >= 400 && res.status < 500, `${res.status} ${query} ${res.text}`);
      t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      t.regex((res.body as { detail: string }).detail, FIXED_DETAILS);
      t.false(setCookies(res).some((c) => c.startsWith(`${SESSION_COOKIE}=`)));
      for (const [, value] of params) {
        if (value.length > 3 && !/^[A-Za-z0-9_.-]+$/.test(value)) t.false(res.text.includes(value), value);
      }
    }),
    { numRuns: 60 },
  );
});

test('logout forgets the session and sends the browser to the issuer’s end_session_endpoint', async (t) => {
  const res = await fetch(`${stack.baseUrl}/admin/queues/auth/logout`, {
    headers: { ...HTML, ...sessionCookie(await sessionOf('ada', ['Admin'])) },
    redirect: 'manual',
  });
  t.is(res.status, 302);
  const location = new URL(res.headers.get('location')!);
  t.is(`${location.origin}${location.pathname}`, `${issuer.url}/session/end`);
  t.is(location.searchParams.get('post_logout_redirect_uri'), `${stack.baseUrl}/admin/queues/auth/logged-out`);
  t.is(location.searchParams.get('client_id'), 'bull-board'); // a session without an ID token
  const cleared = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  t.regex(cleared ?? '', /^emapi_bull_board_session=; Max-Age=0; Path=\/admin\/queues; HttpOnly; SameSite=Strict/);
  const loggedOut = await stack.get('/admin/queues/auth/logged-out', HTML);
  t.is(loggedOut.status, 200);
  t.regex(loggedOut.text, /You are logged out/);
});
