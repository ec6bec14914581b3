import test, { type ExecutionContext } from 'ava';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';

/**
 * CORS_ORIGINS over real HTTP, with real bearer authentication: a browser's preflight carries no
 * token, so an allowed origin's is answered before authentication; any other origin gets no CORS
 * header; and with the variable unset (the default) no response carries one.
 */

const APP = 'https://app.example.com';
const LOCAL = 'http://localhost:5173';

let idp: IdentityProvider;
let listed: Stack;
let any: Stack;
let off: Stack;
let token: string;
test.before(async () => {
  idp = await startIdentityProvider();
  token = await idp.token({ claims: { roles: ['User'] } });
  [listed, any, off] = await Promise.all([
    startStack({ workers: [], env: { ...idp.env.explicit, CORS_ORIGINS: `${APP}, ${LOCAL}` } }),
    startStack({ workers: [], env: { ...idp.env.explicit, CORS_ORIGINS: '*' } }),
    startStack({ workers: [], env: idp.env.explicit }),
  ]);
});
test.after.always(async () => {
  await Promise.all([listed?.close(), any?.close(), off?.close()]);
  await idp?.close();
});

/** What a browser sends before a PATCH with a token, a body and a precondition. */
const preflight = (stack: Stack, origin: string, path = '/Schemes/AAAAAA') =>
  stack.request('OPTIONS', path, {
    headers: {
      origin,
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,content-type,if-match,idempotency-key,prefer',
    },
  });

const list = (value: string | null) => (value ?? '').split(',').map((item) => item.trim().toLowerCase());

function corsHeaders(res: HttpResult): string[] {
  return [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
}

function assertNoCors(t: ExecutionContext, res: HttpResult): void {
  t.deepEqual(corsHeaders(res), [], `no CORS header on a ${res.status}`);
}

test('a preflight from a listed origin is answered without a token, allowing the methods and headers clients use', async (t) => {
  for (const origin of [APP, LOCAL]) {
    const res = await preflight(listed, origin);
    t.is(res.status, 204, res.text);
    t.is(res.headers.get('access-control-allow-origin'), origin);
    t.true(list(res.headers.get('vary')).includes('origin'));
    t.is(res.headers.get('access-control-allow-credentials'), null, 'bearer tokens, no cookies');
    const methods = list(res.headers.get('access-control-allow-methods'));
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) t.true(methods.includes(method), method);
    const headers = list(res.headers.get('access-control-allow-headers'));
    for (const header of ['authorization', 'content-type', 'if-match', 'if-none-match', 'prefer', 'idempotency-key']) {
      t.true(headers.includes(header), header);
    }
    t.truthy(res.headers.get('access-control-max-age'));
  }
});

test('answers to a listed origin let its script read the headers clients need, 401s included', async (t) => {
  const ok = await listed.get('/Schemes?$count=true', { origin: APP, ...bearer(token) });
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers.get('access-control-allow-origin'), APP);
  const exposed = list(ok.headers.get('access-control-expose-headers'));
  for (const header of [
    'location',
    'etag',
    'x-total-count',
    'preference-applied',
    'retry-after',
    'x-request-id',
    'link',
  ]) {
    t.true(exposed.includes(header), header);
  }
  // A script must be able to see that its token was refused.
  const refused = await listed.get('/Schemes', { origin: APP });
  t.is(refused.status, 401);
  t.is(refused.headers.get('access-control-allow-origin'), APP);
});

test('an origin not in the list gets no CORS header: its preflight meets authentication, its reads stay unreadable', async (t) => {
  for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'http://app.example.com']) {
    const pre = await preflight(listed, origin);
    t.is(pre.status, 401, 'a preflight from elsewhere is not answered before authentication');
    assertNoCors(t, pre);
    const read = await listed.get('/Schemes', { origin, ...bearer(token) });
    t.is(read.status, 200);
    assertNoCors(t, read);
    t.true(list(read.headers.get('vary')).includes('origin'), 'caches keep answers per Origin');
  }
  // No Origin at all (curl, servers): nothing CORS either.
  assertNoCors(t, await listed.get('/Schemes', bearer(token)));
});

test('CORS_ORIGINS=* allows any origin, without credentials', async (t) => {
  const res = await preflight(any, 'https://anywhere.example');
  t.is(res.status, 204, res.text);
  t.is(res.headers.get('access-control-allow-origin'), '*');
  t.true(list(res.headers.get('access-control-allow-headers')).includes('authorization'));
  const read = await any.get('/Schemes', { origin: 'https://anywhere.example', ...bearer(token) });
  t.is(read.status, 200);
  t.is(read.headers.get('access-control-allow-origin'), '*');
  t.true(list(read.headers.get('access-control-expose-headers')).includes('etag'));
});

test('CORS is off by default: no CORS header, and a preflight is not answered', async (t) => {
  const pre = await preflight(off, APP);
  t.is(pre.status, 401);
  assertNoCors(t, pre);
  const read = await off.get('/Schemes', { origin: APP, ...bearer(token) });
  t.is(read.status, 200);
  assertNoCors(t, read);
  t.false(list(read.headers.get('vary')).includes('origin'));
});
