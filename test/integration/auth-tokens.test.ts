import test from 'ava';
import { SignJWT, generateKeyPair } from 'jose';
import { startStack, type Stack } from '../support/stack';
import { AUDIENCE, bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertUnauthorized, unsecuredToken } from '../support/auth';

/** Every kind of bad token against an API configured with an explicit issuer and JWKS URI. */

let idp: IdentityProvider;
let stack: Stack;
test.before(async () => {
  idp = await startIdentityProvider();
  stack = await startStack({ workers: [], env: idp.env.explicit });
});
test.after.always(async () => {
  await stack?.close();
  await idp?.close();
});

const USER = { roles: ['User'] };

test('a valid RS256 token from the JWKS reads entity routes', async (t) => {
  const res = await stack.get('/Schemes', bearer(await idp.token({ claims: USER })));
  t.is(res.status, 200, res.text);
  t.true(Array.isArray(res.body));
});

test('the Bearer scheme is case-insensitive', async (t) => {
  const token = await idp.token({ claims: USER });
  t.is((await stack.get('/Schemes', { authorization: `bearer ${token}` })).status, 200);
  t.is((await stack.get('/Schemes', { authorization: `BEARER ${token}` })).status, 200);
});

test('no token: 401 with a bare Bearer challenge', async (t) => {
  assertUnauthorized(t, await stack.get('/Schemes'), undefined, /bearer token is required/);
});

test('a malformed Authorization header: 401 invalid_request', async (t) => {
  assertUnauthorized(t, await stack.get('/Schemes', { authorization: 'Basic YWxpY2U6c2VjcmV0' }), 'invalid_request');
  assertUnauthorized(t, await stack.get('/Schemes', { authorization: 'Bearer' }), 'invalid_request');
  assertUnauthorized(t, await stack.get('/Schemes', { authorization: 'Bearer a b' }), 'invalid_request');
});

test('a token in the query string is refused', async (t) => {
  const token = await idp.token({ claims: USER });
  assertUnauthorized(t, await stack.get(`/Schemes?access_token=${token}`), 'invalid_request', /Authorization header/);
});

test('garbage instead of a JWT: 401 invalid_token', async (t) => {
  assertUnauthorized(t, await stack.get('/Schemes', bearer('not-a-jwt')), 'invalid_token');
});

test('a bad signature (another key under the published kid): 401', async (t) => {
  const { privateKey } = await generateKeyPair('RS256');
  const forged = await idp.token({ claims: USER, key: privateKey });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(forged)), 'invalid_token', /signature/);
});

test('a tampered payload: 401', async (t) => {
  const [header, , signature] = (await idp.token({ claims: USER })).split('.');
  const payload = Buffer.from(
    JSON.stringify({ iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', roles: ['Admin'], exp: 9999999999 }),
  ).toString('base64url');
  assertUnauthorized(t, await stack.get('/Schemes', bearer(`${header}.${payload}.${signature}`)), 'invalid_token');
});

test('alg none: 401', async (t) => {
  const token = unsecuredToken({ iss: idp.issuer, aud: AUDIENCE, sub: 'alice', roles: ['Admin'], exp: 9999999999 });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /algorithm or key/);
});

test('RS256/HS256 confusion (HS256 signed with the public key): 401', async (t) => {
  const claims = { iss: idp.issuer, aud: AUDIENCE, sub: 'alice', roles: ['Admin'] };
  for (const secret of [idp.publicKeyPem, JSON.stringify(idp.publicJwk), idp.publicJwk.n!]) {
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: idp.publicJwk.kid })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /algorithm or key/);
  }
});

test('expired (beyond the 5 s clock tolerance): 401', async (t) => {
  const token = await idp.token({ claims: USER, expiresIn: -60 });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /expired/);
});

test('not yet valid (nbf ahead): 401', async (t) => {
  const token = await idp.token({ claims: USER, notBefore: 120 });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /not valid yet/);
});

test('wrong issuer, including the issuer without its trailing slash: 401', async (t) => {
  for (const iss of ['https://evil.example/', idp.issuer.replace(/\/$/, '')]) {
    const token = await idp.token({ claims: { ...USER, iss } });
    assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /issuer/);
  }
});

test('wrong or missing audience: 401', async (t) => {
  for (const aud of ['https://other.example/api', undefined]) {
    const token = await idp.token({ claims: { ...USER, aud } });
    assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /audience/);
  }
});

test('an audience array containing ours is accepted', async (t) => {
  const token = await idp.token({ claims: { ...USER, aud: ['https://other.example/api', AUDIENCE] } });
  t.is((await stack.get('/Schemes', bearer(token))).status, 200);
});

test('a token without a subject: 401', async (t) => {
  const token = await idp.token({ claims: { ...USER, sub: undefined } });
  assertUnauthorized(t, await stack.get('/Schemes', bearer(token)), 'invalid_token', /subject/);
});

test('the roles claim may be a string or an array; unknown and wrongly cased names count for nothing', async (t) => {
  const roles = async (claim: unknown) =>
    (await stack.get('/Roles', bearer(await idp.token({ claims: { roles: claim } })))).body;
  t.deepEqual(await roles('Admin'), { Subject: 'alice', Roles: ['Admin'] });
  t.deepEqual(await roles(['User', 'Admin', 'Auditor']), { Subject: 'alice', Roles: ['User', 'Admin'] });
  t.deepEqual(await roles(['user', 'ADMIN']), { Subject: 'alice', Roles: [] });
  t.deepEqual(await roles(42), { Subject: 'alice', Roles: [] });
});

test('no stack trace or verifier internals in 401 bodies', async (t) => {
  const res = await stack.get('/Schemes', bearer('eyJhbGciOiJSUzI1NiJ9.e30.AAAA'));
  assertUnauthorized(t, res, 'invalid_token');
  t.notRegex(res.text, /127\.0\.0\.1|at .*\.js|Error:/);
});
