import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import test from 'ava';
import { assertAuthConfigured, ConfigError, loadConfig } from '../../infra/config/load-config';
import { startStack, type Stack } from '../support/stack';
import { uniqueQueuePrefix } from '../support/test-database';
import { assertForbidden } from '../support/auth';

/** Mock authentication (spec §5.6): every request is one caller, no token read; never in production. */

const stacks: Stack[] = [];
async function mockStack(role?: string): Promise<Stack> {
  const stack = await startStack({
    workers: [],
    env: { AUTH_MOCK: 'true', ...(role ? { AUTH_MOCK_ROLE: role } : {}) },
  });
  stacks.push(stack);
  return stack;
}
test.after.always(async () => {
  await Promise.all(stacks.map((s) => s.close()));
});

test('default mock caller is Admin: everything passes, any Authorization header is ignored', async (t) => {
  const stack = await mockStack();
  t.deepEqual((await stack.get('/Roles')).body, { Subject: 'mock-user', Roles: ['Admin'] });
  t.is((await stack.get('/Schemes')).status, 200);
  t.is((await stack.get('/Jobs')).status, 200);
  t.is((await stack.get('/admin/queues')).status, 200);
  t.is((await stack.get('/Roles/Assignments')).status, 200);
  t.is((await stack.get('/Schemes', { authorization: 'Bearer garbage' })).status, 200);
});

test('AUTH_MOCK_ROLE=User: entity routes and exports yes, admin routes 403', async (t) => {
  const stack = await mockStack('User');
  t.deepEqual((await stack.get('/Roles')).body, { Subject: 'mock-user', Roles: ['User'] });
  t.is((await stack.get('/Schemes')).status, 200);
  t.is((await stack.get('/Export/Schemes')).status, 200);
  t.is((await stack.get('/Roles/Available')).status, 200);
  assertForbidden(t, await stack.get('/Jobs'));
  assertForbidden(t, await stack.get('/admin/queues'));
  assertForbidden(t, await stack.get('/Roles/Assignments'));
});

test('AUTH_MOCK_ROLE=none: authenticated without a role, so 403 everywhere but /Roles', async (t) => {
  const stack = await mockStack('none');
  t.deepEqual((await stack.get('/Roles')).body, { Subject: 'mock-user', Roles: [] });
  for (const path of ['/Schemes', '/Export/Schemes', '/Roles/Available', '/Jobs', '/admin/queues']) {
    assertForbidden(t, await stack.get(path));
  }
});

test('mock authentication refuses production', (t) => {
  const stores = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x', COMMAND_SIGNING_KEY: 'k'.repeat(32) };
  t.throws(() => loadConfig({ ...stores, NODE_ENV: 'production', AUTH_MOCK: 'true' }), {
    instanceOf: ConfigError,
    message: /NODE_ENV=production/,
  });
  // Without auth settings production does not fall back to mock: it asks for real settings.
  t.throws(() => assertAuthConfigured(loadConfig({ ...stores, NODE_ENV: 'production' }).auth), {
    instanceOf: ConfigError,
  });
  t.false(
    loadConfig({ ...stores, NODE_ENV: 'production', AUTH_SECRET: 's', AUTH_ISSUER: 'i', AUTH_AUDIENCE: 'a' }).auth.mock,
  );
});

const API_MAIN = path.resolve(__dirname, '../../api/main.js');

function apiEnv(extra: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: process.env.TEST_TEMPLATE_DATABASE_URL ?? '',
    REDIS_URL: process.env.REDIS_URL ?? '',
    QUEUE_PREFIX: uniqueQueuePrefix(),
    PORT: '0',
    LOG_LEVEL: 'info',
    COMMAND_SIGNING_KEY: process.env.COMMAND_SIGNING_KEY ?? '',
    ...extra,
  };
}

test('the API process under NODE_ENV=production with AUTH_MOCK=true exits at once, saying why', async (t) => {
  const child = spawn(process.execPath, [API_MAIN], {
    env: apiEnv({ NODE_ENV: 'production', AUTH_MOCK: 'true' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  t.is(code, 1);
  t.regex(stderr, /AUTH_MOCK cannot be on when NODE_ENV=production/);
});

test('the API process with no auth settings refuses to start: mock authentication is never implied', async (t) => {
  const child = spawn(process.execPath, [API_MAIN], {
    env: apiEnv({ NODE_ENV: 'development' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  t.is(code, 1);
  t.regex(stderr, /no authentication configured/);
  t.regex(stderr, /AUTH_MOCK=true/);
});

test('the API process with AUTH_MOCK=true warns loudly and listens on 127.0.0.1 only', async (t) => {
  const child = spawn(process.execPath, [API_MAIN], {
    env: apiEnv({ NODE_ENV: 'development', AUTH_MOCK: 'true' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  let stdout = '';
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('API listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`API exited early (${code}): ${stdout}`)));
  });
  child.kill('SIGTERM');
  await exited;
  const listening = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { msg: string; host?: string })
    .find((entry) => entry.msg.includes('API listening'));
  t.is(listening?.host, '127.0.0.1');
  const warning = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .find((entry) => entry.msg.includes('AUTH_MOCK is on'));
  t.truthy(warning, stdout);
  t.is(warning?.level, 40); // pino "warn"
  t.regex(warning?.msg ?? '', /Never use this in production/);
});
