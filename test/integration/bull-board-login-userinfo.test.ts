import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden } from '../support/auth';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { SESSION_COOKIE, TRANSACTION_COOKIE } from '../../api/auth/login/bull-board-login';

/**
 * The whole login over plain HTTP (no browser) with the other client kind and the other place of
 * the roles: a confidential client (client_secret_basic) at an issuer that keeps the roles claim
 * out of the ID token, so the API reads it from userinfo.
 */

let idp: IdentityProvider;
let issuer: OidcIssuer;
let stack: Stack;
test.before(async () => {
  idp = await startIdentityProvider();
  issuer = await startOidcIssuer();
  stack = await startStack({
    workers: [],
    env: idp.env.discovery,
    envFor: (origin) => issuer.register(origin, { confidential: true, rolesInUserinfo: true }),
  });
});
test.after.always(async () => {
  await stack?.close();
  await issuer?.close();
  await idp?.close();
});

const HTML = { accept: 'text/html' };

/** Cookies by name, from Set-Cookie headers (paths ignored: every request here may carry them all). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /Max-Age=0|expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** Opens the board, logs in at the issuer as `user`, and brings the answer to the callback. */
async function logIn(user: string): Promise<{ jar: CookieJar; callback: Response }> {
  const api = new CookieJar();
  const idpJar = new CookieJar();
  const step = async (url: string, jar: CookieJar, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...HTML, cookie: jar.header(), ...(init.headers as Record<string, string>) },
    });
    jar.take(res);
    return res;
  };
  let res = await step(`${stack.baseUrl}/admin/queues`, api);
  let location = res.headers.get('location')!;
  // At the issuer: its redirects until the login form, the form, then on to the callback.
  while (!location.startsWith(stack.baseUrl)) {
    const url = new URL(location, issuer.url).href;
    if (/\/interaction\/[^/]+$/.test(url)) {
      res = await step(url, idpJar, {
        method: 'POST',
        body: new URLSearchParams({ login: user, password: 'any' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    } else {
      res = await step(url, idpJar);
    }
    location = res.headers.get('location')!;
    if (!location) throw new Error(`the issuer stopped at ${url}: ${res.status}`);
  }
  const callback = await step(location, api);
  return { jar: api, callback };
}

test('a confidential client logs an admin in; the roles come from userinfo', async (t) => {
  const { jar, callback } = await logIn('admin');
  t.is(callback.status, 200, await callback.clone().text());
  t.regex(await callback.text(), /<meta http-equiv="refresh" content="0;url=\/admin\/queues">/);
  t.truthy(jar.get(SESSION_COOKIE));
  t.is(jar.get(TRANSACTION_COOKIE), undefined);
  const session = callback.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
  t.regex(session, /; Max-Age=3600; Path=\/admin\/queues; HttpOnly; SameSite=Strict$/);
  const board = await stack.get('/admin/queues/api/queues', { cookie: jar.header() });
  t.is(board.status, 200, board.text);
  // Logging out names the session's ID token to the issuer.
  const logout = await fetch(`${stack.baseUrl}/admin/queues/auth/logout`, {
    headers: { cookie: jar.header() },
    redirect: 'manual',
  });
  const location = new URL(logout.headers.get('location')!);
  const idToken = location.searchParams.get('id_token_hint') ?? '';
  const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString()) as object;
  t.like(claims, { sub: 'admin', iss: issuer.url });
  // So the Admin role the board saw came from userinfo, not from the ID token.
  t.false('roles' in claims);
});

test('a user logs in and is refused: 403 page and 403 problem', async (t) => {
  const { jar, callback } = await logIn('user');
  t.is(callback.status, 200);
  const page = await stack.get('/admin/queues', { ...HTML, cookie: jar.header() });
  t.is(page.status, 403);
  t.regex(page.text, /logged in as <strong>user<\/strong>/);
  assertForbidden(t, await stack.get('/admin/queues/api/queues', { cookie: jar.header() }));
});

test('an account without any role is refused as well', async (t) => {
  const { jar } = await logIn('nobody');
  assertForbidden(t, await stack.get('/admin/queues/api/queues', { cookie: jar.header() }));
});
