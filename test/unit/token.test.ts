import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { UsageError, parseArgs, parseTtl, settingsFromEnv, signToken, type TokenSettings } from '../../scripts/token';

const SETTINGS: TokenSettings = {
  secret: 'unit-test-secret-of-at-least-32-bytes',
  audience: 'emapi',
  issuer: 'http://localhost/',
  alg: 'HS256',
  rolesClaim: 'roles',
};
const key = (secret: string) => new TextEncoder().encode(secret);

test('the token verifies with the secret, issuer and audience, and carries sub, roles and ttl', async (t) => {
  const now = Date.UTC(2030, 0, 1);
  const token = signToken({ roles: ['User'], subject: 'alice', ttlSeconds: 3600 }, SETTINGS, now);
  const { payload, protectedHeader } = await jwtVerify(token, key(SETTINGS.secret), {
    issuer: SETTINGS.issuer,
    audience: SETTINGS.audience,
    algorithms: ['HS256'],
    currentDate: new Date(now + 1000),
  });
  t.is(protectedHeader.alg, 'HS256');
  t.like(payload, { sub: 'alice', roles: ['User'], iat: now / 1000, exp: now / 1000 + 3600 });
  await t.throwsAsync(jwtVerify(token, key('another-secret-of-at-least-32-bytes!'), { currentDate: new Date(now) }));
});

test('roles go into the configured claim; HS384/HS512 sign with their own algorithm', async (t) => {
  const settings: TokenSettings = { ...SETTINGS, alg: 'HS512', rolesClaim: 'https://emapi/roles' };
  const token = signToken({ roles: ['Admin'], subject: 'root', ttlSeconds: 60 }, settings);
  t.is(decodeProtectedHeader(token).alg, 'HS512');
  const { payload } = await jwtVerify(token, key(SETTINGS.secret), { algorithms: ['HS512'] });
  t.deepEqual(payload['https://emapi/roles'], ['Admin']);
  t.false('roles' in payload);
});

test('--role none gives a token with an empty role list', (t) => {
  t.deepEqual(parseArgs(['--role', 'none']), { roles: [], subject: 'dev-user', ttlSeconds: 3600 });
});

test('arguments: sub and ttl; clear errors for mistakes', (t) => {
  t.deepEqual(parseArgs(['--role', 'Admin', '--sub', 'bob', '--ttl', '15m']), {
    roles: ['Admin'],
    subject: 'bob',
    ttlSeconds: 900,
  });
  t.is(parseArgs(['--help']), 'help');
  t.throws(() => parseArgs([]), { instanceOf: UsageError, message: /--role is required/ });
  t.throws(() => parseArgs(['--role', 'user']), { instanceOf: UsageError, message: /User, Admin or none/ });
  t.throws(() => parseArgs(['--role']), { instanceOf: UsageError, message: /needs a value/ });
  t.throws(() => parseArgs(['--role', 'User', '--color', 'red']), { message: /unknown argument '--color'/ });
});

test('ttl: seconds, minutes, hours, days', (t) => {
  t.is(parseTtl('45'), 45);
  t.is(parseTtl('30s'), 30);
  t.is(parseTtl('2h'), 7200);
  t.is(parseTtl('7d'), 604800);
  for (const bad of ['0', '-1h', '1w', 'soon', '']) t.throws(() => parseTtl(bad), { instanceOf: UsageError });
});

test('settings come from the environment and name what is missing', (t) => {
  t.throws(() => settingsFromEnv({ AUTH_SECRET: 's' }), { message: 'AUTH_AUDIENCE, AUTH_ISSUER are not set.' });
  t.throws(
    () => settingsFromEnv({ AUTH_SECRET: 's', AUTH_AUDIENCE: 'a', AUTH_ISSUER: 'i', AUTH_TOKEN_SIGNING_ALG: 'RS256' }),
    {
      message: /HS256, HS384 or HS512/,
    },
  );
  t.deepEqual(settingsFromEnv({ AUTH_SECRET: 's', AUTH_AUDIENCE: 'a', AUTH_ISSUER: 'i' }), {
    secret: 's',
    audience: 'a',
    issuer: 'i',
    alg: 'HS256',
    rolesClaim: 'roles',
  });
});

test('the command explains what to set when the environment is missing, and prints nothing on stdout', async (t) => {
  const script = path.resolve(__dirname, '../../scripts/token.js');
  const error = await t.throwsAsync(
    promisify(execFile)(process.execPath, [script, '--role', 'User'], { env: { PATH: process.env.PATH } }),
  );
  const failed = error as unknown as { code: number; stdout: string; stderr: string };
  t.is(failed.code, 2);
  t.is(failed.stdout, '');
  t.regex(failed.stderr, /AUTH_SECRET, AUTH_AUDIENCE, AUTH_ISSUER are not set/);
  t.regex(failed.stderr, /export AUTH_SECRET=/);
});
