import test from 'ava';
import { ConfigError, loadConfig } from '../../infra/config/load-config';

/** DESIGN §15: the Bull Board login is off unless its issuer is set, and complete or refused. */

const base = {
  DATABASE_URL: 'postgres://x/y',
  REDIS_URL: 'redis://x',
  COMMAND_SIGNING_KEY: 'k'.repeat(32),
  AUTH_ISSUER_BASE_URL: 'https://idp.example.com/',
  AUTH_AUDIENCE: 'api',
};
const login = {
  BULL_BOARD_OIDC_ISSUER: 'https://idp.example.com/',
  BULL_BOARD_OIDC_CLIENT_ID: 'bull-board',
  BULL_BOARD_PUBLIC_URL: 'https://api.example.com',
  BULL_BOARD_SESSION_SECRET: 's'.repeat(32),
};

test('off by default: no login, Bull Board as before', (t) => {
  t.is(loadConfig(base).bullBoardLogin, undefined);
});

test('on with its issuer: defaults for scopes and session lifetime, a public client without a secret', (t) => {
  t.deepEqual(loadConfig({ ...base, ...login }).bullBoardLogin, {
    issuer: 'https://idp.example.com/',
    clientId: 'bull-board',
    scopes: 'openid profile',
    publicUrl: 'https://api.example.com',
    sessionSecret: 's'.repeat(32),
    sessionTtlSeconds: 60 * 60,
  });
  const confidential = loadConfig({
    ...base,
    ...login,
    BULL_BOARD_OIDC_CLIENT_SECRET: 'secret',
    BULL_BOARD_SESSION_TTL_MINUTES: '30',
    BULL_BOARD_PUBLIC_URL: 'https://api.example.com/',
  }).bullBoardLogin;
  t.like(confidential, { clientSecret: 'secret', sessionTtlSeconds: 1800, publicUrl: 'https://api.example.com' });
});

const refusals: [string, Record<string, string>, RegExp][] = [
  ['no session secret', { BULL_BOARD_SESSION_SECRET: '' }, /BULL_BOARD_SESSION_SECRET must be set to at least 32/],
  ['a short session secret', { BULL_BOARD_SESSION_SECRET: 'short' }, /BULL_BOARD_SESSION_SECRET must be set/],
  ['no client id', { BULL_BOARD_OIDC_CLIENT_ID: '' }, /BULL_BOARD_OIDC_CLIENT_ID is required/],
  ['no public URL', { BULL_BOARD_PUBLIC_URL: '' }, /BULL_BOARD_PUBLIC_URL is required/],
  ['a public URL with a path', { BULL_BOARD_PUBLIC_URL: 'https://api.example.com/emapi' }, /must be an origin/],
  ['a public URL that is no URL', { BULL_BOARD_PUBLIC_URL: 'api.example.com' }, /must be an http\(s\) URL/],
  ['an issuer that is no URL', { BULL_BOARD_OIDC_ISSUER: 'idp' }, /BULL_BOARD_OIDC_ISSUER must be an http\(s\) URL/],
  ['an http issuer in production', { BULL_BOARD_OIDC_ISSUER: 'http://idp/', NODE_ENV: 'production' }, /https/],
  ['a session lifetime of 0', { BULL_BOARD_SESSION_TTL_MINUTES: '0' }, /BULL_BOARD_SESSION_TTL_MINUTES/],
];
for (const [name, env, message] of refusals) {
  test(`refused at start: ${name}`, (t) => {
    t.throws(() => loadConfig({ ...base, ...login, ...env }), { instanceOf: ConfigError, message });
  });
}

test('login settings without the issuer are refused rather than ignored', (t) => {
  t.throws(() => loadConfig({ ...base, BULL_BOARD_SESSION_SECRET: 's'.repeat(32) }), {
    instanceOf: ConfigError,
    message: /BULL_BOARD_SESSION_SECRET need BULL_BOARD_OIDC_ISSUER/,
  });
});

test('mock authentication and the login exclude each other', (t) => {
  t.throws(
    () =>
      loadConfig({
        ...login,
        DATABASE_URL: 'postgres://x/y',
        REDIS_URL: 'redis://x',
        COMMAND_SIGNING_KEY: 'k'.repeat(32),
        AUTH_MOCK: 'true',
      }),
    {
      instanceOf: ConfigError,
      message: /cannot be combined with AUTH_MOCK/,
    },
  );
});
