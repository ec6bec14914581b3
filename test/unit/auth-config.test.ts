import test from 'ava';
import { authenticate, verifierOptions } from '../../api/auth/authenticate';
import { assertAuthConfigured, ConfigError, loadConfig, type AuthConfig } from '../../infra/config/load-config';
import { claimAt, mergeRoles, policyAllows, POLICY, rolesInClaim } from '../../domain/auth/roles';
import { validateRoleAssignment } from '../../domain/auth/role-assignment';

const auth = (env: Record<string, string>): AuthConfig =>
  loadConfig({ DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x', COMMAND_SIGNING_KEY: 'k'.repeat(32), ...env })
    .auth;

test('verifier options come only from the config: the library must not fall back to process.env', (t) => {
  // These are the variables express-oauth2-jwt-bearer reads as defaults; they must change nothing.
  const polluted = {
    ISSUER_BASE_URL: 'https://env-issuer.example/',
    ISSUER: 'https://env-issuer.example/',
    JWKS_URI: 'https://env-issuer.example/jwks',
    AUDIENCE: 'env-audience',
    SECRET: 'env-secret',
    TOKEN_SIGNING_ALG: 'HS256',
  };
  const saved = { ...process.env };
  Object.assign(process.env, polluted);
  try {
    const options = verifierOptions(
      auth({ AUTH_ISSUER: 'https://idp/', AUTH_JWKS_URI: 'https://idp/jwks', AUTH_AUDIENCE: 'api' }),
    );
    t.like(options, {
      issuerBaseURL: '',
      issuer: 'https://idp/',
      jwksUri: 'https://idp/jwks',
      secret: '',
      tokenSigningAlg: '',
      audience: 'api',
    });
    for (const name of ['issuerBaseURL', 'issuer', 'jwksUri', 'secret', 'tokenSigningAlg', 'audience'] as const) {
      t.not(options[name], undefined, name);
    }
    t.deepEqual(options.dpop, { enabled: false });
    // Had SECRET leaked in beside the JWKS URI, the library would refuse to build the middleware.
    const config = auth({ AUTH_ISSUER: 'https://idp/', AUTH_JWKS_URI: 'https://idp/jwks', AUTH_AUDIENCE: 'api' });
    t.notThrows(() => authenticate(config, { rolesOf: async () => [], forget: () => undefined }));
  } finally {
    for (const name of Object.keys(polluted)) if (!(name in saved)) delete process.env[name];
  }
});

test('incomplete or contradictory auth settings fail at start with a sentence saying what to set', (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ AUTH_SECRET: 's', AUTH_AUDIENCE: 'a' }, /AUTH_SECRET needs AUTH_ISSUER/],
    [{ AUTH_JWKS_URI: 'https://idp/jwks', AUTH_AUDIENCE: 'a' }, /AUTH_JWKS_URI needs AUTH_ISSUER/],
    [{ AUTH_ISSUER: 'https://idp/', AUTH_AUDIENCE: 'a' }, /AUTH_ISSUER needs AUTH_JWKS_URI/],
    [
      { AUTH_SECRET: 's', AUTH_ISSUER: 'i', AUTH_JWKS_URI: 'https://idp/jwks', AUTH_AUDIENCE: 'a' },
      /cannot be combined/,
    ],
    [
      { AUTH_SECRET: 's', AUTH_ISSUER: 'i', AUTH_TOKEN_SIGNING_ALG: 'RS256', AUTH_AUDIENCE: 'a' },
      /HS256, HS384 or HS512/,
    ],
    [
      { AUTH_ISSUER_BASE_URL: 'https://idp/', AUTH_TOKEN_SIGNING_ALG: 'HS256', AUTH_AUDIENCE: 'a' },
      /needs AUTH_SECRET/,
    ],
  ];
  for (const [env, message] of cases) t.throws(() => verifierOptions(auth(env)), { instanceOf: ConfigError, message });
  t.throws(() => assertAuthConfigured(auth({ AUTH_ISSUER_BASE_URL: 'https://idp/' })), {
    message: /AUTH_AUDIENCE is required/,
  });
  // Mock authentication is never implied by the absence of settings, in any NODE_ENV.
  t.false(auth({ NODE_ENV: 'development' }).mock);
  t.throws(() => assertAuthConfigured(auth({ NODE_ENV: 'development' })), { message: /no authentication configured/ });
});

test('the three configuration modes', (t) => {
  t.like(verifierOptions(auth({ AUTH_ISSUER_BASE_URL: 'https://idp/', AUTH_AUDIENCE: 'a' })), {
    issuerBaseURL: 'https://idp/',
    issuer: '',
    jwksUri: '',
  });
  t.like(verifierOptions(auth({ AUTH_SECRET: 's', AUTH_ISSUER: 'i', AUTH_AUDIENCE: 'a' })), {
    secret: 's',
    tokenSigningAlg: 'HS256',
    issuer: 'i',
  });
});

test('roles claim: top-level name first (URLs hold dots), then a dotted path', (t) => {
  t.deepEqual(claimAt({ 'https://x.example/roles': ['Admin'] }, 'https://x.example/roles'), ['Admin']);
  t.deepEqual(claimAt({ realm_access: { roles: ['User'] } }, 'realm_access.roles'), ['User']);
  t.is(claimAt({ realm_access: ['User'] }, 'realm_access.roles'), undefined);
  t.is(claimAt({}, 'roles'), undefined);
});

test('role names are exact; strings are one role; claims and grants merge once each', (t) => {
  t.deepEqual(rolesInClaim('Admin'), ['Admin']);
  t.deepEqual(rolesInClaim('User Admin'), []);
  t.deepEqual(rolesInClaim(['user', 'User', 7, null, 'Admin']), ['User', 'Admin']);
  t.deepEqual(rolesInClaim({ User: true }), []);
  t.deepEqual(mergeRoles(['Admin'], ['User', 'Admin']), ['User', 'Admin']);
});

test('policies: default is User or Admin, AdminOnly is Admin', (t) => {
  t.true(policyAllows(POLICY.default, ['User']));
  t.true(policyAllows(POLICY.default, ['Admin']));
  t.false(policyAllows(POLICY.default, []));
  t.false(policyAllows(POLICY.adminOnly, ['User']));
  t.true(policyAllows(POLICY.adminOnly, ['User', 'Admin']));
});

test('role assignment bodies', (t) => {
  t.deepEqual(validateRoleAssignment({ Subject: 'a|b', Role: 'Admin' }), {
    ok: true,
    value: { Subject: 'a|b', Role: 'Admin' },
  });
  t.deepEqual(validateRoleAssignment({ Subject: ' a', Role: 'User' }), {
    ok: false,
    errors: ['RoleAssignment.Subject: must not start or end with whitespace'],
  });
  t.deepEqual(validateRoleAssignment(null), {
    ok: false,
    errors: ['RoleAssignment: must be a JSON object with Subject and Role'],
  });
});
