import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { SignJWT } from 'jose';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden, assertUnauthorized } from '../support/auth';
import { settingsFromEnv, signToken } from '../../scripts/token';

/** Local shared-secret mode (AUTH_SECRET, HS256) and the `npm run token` command that serves it. */

const ENV = {
  AUTH_SECRET: 'a-local-secret-of-more-than-32-bytes!',
  AUTH_ISSUER: 'http://localhost/',
  AUTH_AUDIENCE: 'emapi-local',
  AUTH_ROLES_CLAIM: 'https://emapi.test/roles',
};
const settings = settingsFromEnv(ENV);
const TOKEN_SCRIPT = path.resolve(__dirname, '../../scripts/token.js');

let stack: Stack;
let idp: IdentityProvider;
test.before(async () => {
  idp = await startIdentityProvider();
  stack = await startStack({ workers: [], env: ENV });
});
test.after.always(async () => {
  await stack?.close();
  await idp?.close();
});

const hs = (claims: Record<string, unknown>, secret = ENV.AUTH_SECRET, alg = 'HS256') =>
  new SignJWT({ iss: ENV.AUTH_ISSUER, aud: ENV.AUTH_AUDIENCE, sub: 'sam', ...claims })
    .setProtectedHeader({ alg })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));

test('a token from the token command is accepted, with roles in the configured claim', async (t) => {
  const token = signToken({ roles: ['User'], subject: 'sam', ttlSeconds: 60 }, settings);
  const res = await stack.get('/Roles', bearer(token));
  t.deepEqual(res.body, { Subject: 'sam', Roles: ['User'] });
  t.is((await stack.get('/Schemes', bearer(token))).status, 200);
});

test('the token CLI prints a working token from the environment', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [TOKEN_SCRIPT, '--role', 'Admin', '--sub', 'root'], {
    env: { ...ENV, PATH: process.env.PATH },
  });
  const res = await stack.get('/Roles', bearer(stdout.trim()));
  t.deepEqual(res.body, { Subject: 'root', Roles: ['Admin'] });
  t.is((await stack.get('/Jobs', bearer(stdout.trim()))).status, 200);
});

test('a role under the default `roles` claim means nothing when another claim is configured', async (t) => {
  const token = await hs({ roles: ['Admin'] });
  assertForbidden(t, await stack.get('/Schemes', bearer(token)));
});

test('a wrong secret: 401', async (t) => {
  const token = await hs({ [ENV.AUTH_ROLES_CLAIM]: ['Admin'] }, 'another-secret-of-more-than-32-bytes!!');
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /signature/);
});

test('another HMAC algorithm than the configured HS256: 401', async (t) => {
  const token = await hs({ [ENV.AUTH_ROLES_CLAIM]: ['Admin'] }, ENV.AUTH_SECRET, 'HS512');
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token');
});

test('an RS256 token (even from a real provider, with our issuer and audience): 401', async (t) => {
  const token = await idp.token({ claims: { iss: ENV.AUTH_ISSUER, aud: ENV.AUTH_AUDIENCE, roles: ['Admin'] } });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /algorithm or key/);
});

test('an expired token from the token command: 401', async (t) => {
  const token = signToken({ roles: ['User'], subject: 'sam', ttlSeconds: 60 }, settings, Date.now() - 3600_000);
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /expired/);
});
