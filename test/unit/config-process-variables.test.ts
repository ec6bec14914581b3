import test from 'ava';
import { ConfigError, readVariables } from '../../infra/config/environment';
import { loadConfig } from '../../infra/config/load-config';
import { loadCommandWorkerConfig } from '../../infra/config/command-worker-config';
import { primaryLogLevel, processCount } from '../../infra/config/entry-point-config';

/**
 * The variables a process kind reads besides loadConfig (entry points, command workers, the demo
 * seed): declared with the rest in infra/config/environment.ts, read through those declarations.
 */

const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x', COMMAND_SIGNING_KEY: 'k'.repeat(32) };
const commandWorker = (env: Record<string, string>) => loadCommandWorkerConfig(loadConfig({ ...base, ...env }), env);

test('API_PROCESSES and COMMAND_WORKER_PROCESSES: one process by default, a positive integer otherwise', (t) => {
  t.is(processCount('API_PROCESSES', {}), 1);
  t.is(processCount('API_PROCESSES', { API_PROCESSES: '' }), 1);
  t.is(processCount('COMMAND_WORKER_PROCESSES', { COMMAND_WORKER_PROCESSES: '3' }), 3);
  for (const bad of ['0', '-1', '1.5', 'two']) {
    t.throws(() => processCount('API_PROCESSES', { API_PROCESSES: bad }), {
      instanceOf: ConfigError,
      message: `API_PROCESSES must be an integer ≥ 1, got '${bad}'`,
    });
  }
});

test('a primary logs at LOG_LEVEL, else as every process does (warn under NODE_ENV=test, else info)', (t) => {
  t.is(primaryLogLevel({}), 'info');
  t.is(primaryLogLevel({ NODE_ENV: 'test' }), 'warn');
  t.is(primaryLogLevel({ NODE_ENV: 'test', LOG_LEVEL: 'debug' }), 'debug');
  t.is(primaryLogLevel({ NODE_ENV: 'test' }), loadConfig({ ...base, NODE_ENV: 'test' }).logLevel);
});

test('COMMAND_LOCK_DURATION_MS and COMMAND_STALLED_INTERVAL_MS: the command queue’s own, else the WORKER_* ones', (t) => {
  t.deepEqual(commandWorker({}).stalledRecovery, { lockDuration: undefined, stalledInterval: undefined });
  t.deepEqual(commandWorker({ WORKER_LOCK_DURATION_MS: '5000', WORKER_STALLED_INTERVAL_MS: '2000' }).stalledRecovery, {
    lockDuration: 5000,
    stalledInterval: 2000,
  });
  t.deepEqual(
    commandWorker({
      WORKER_LOCK_DURATION_MS: '5000',
      COMMAND_LOCK_DURATION_MS: '1000',
      COMMAND_STALLED_INTERVAL_MS: '250',
    }).stalledRecovery,
    { lockDuration: 1000, stalledInterval: 250 },
  );
  t.throws(() => commandWorker({ COMMAND_LOCK_DURATION_MS: '0' }), {
    instanceOf: ConfigError,
    message: /COMMAND_LOCK_DURATION_MS must be an integer ≥ 1, got '0'/,
  });
});

test('COMMAND_TEST_PAUSE_*: test only, never in production; the place is read only with a pause', (t) => {
  t.is(commandWorker({}).testPause, undefined);
  t.deepEqual(commandWorker({ COMMAND_TEST_PAUSE_MS: '60000' }).testPause, { at: 'before-commit', ms: 60_000 });
  t.deepEqual(commandWorker({ COMMAND_TEST_PAUSE_MS: '5', COMMAND_TEST_PAUSE_AT: 'after-commit' }).testPause, {
    at: 'after-commit',
    ms: 5,
  });
  t.throws(() => commandWorker({ COMMAND_TEST_PAUSE_MS: '5', COMMAND_TEST_PAUSE_AT: 'later' }), {
    instanceOf: ConfigError,
    message: /COMMAND_TEST_PAUSE_AT/,
  });
  t.is(commandWorker({ COMMAND_TEST_PAUSE_AT: 'later' }).testPause, undefined, 'no pause, nothing to place');
  const production = { NODE_ENV: 'production', AUTH_MOCK: 'false' };
  t.is(
    commandWorker({ ...production, COMMAND_TEST_PAUSE_MS: '5', COMMAND_TEST_PAUSE_AT: 'later' }).testPause,
    undefined,
  );
  // As before: a malformed pause is refused even where it would be ignored.
  t.throws(() => commandWorker({ ...production, COMMAND_TEST_PAUSE_MS: 'soon' }), { message: /COMMAND_TEST_PAUSE_MS/ });
});

test('SEED_DEMO: true unless `false` (any case, spaces around); anything else refused', (t) => {
  const seedDemo = (value?: string) => readVariables(['SEED_DEMO'], { SEED_DEMO: value }).SEED_DEMO;
  t.true(seedDemo());
  t.true(seedDemo(''));
  t.true(seedDemo(' TRUE '));
  t.false(seedDemo('false'));
  t.false(seedDemo(' False '));
  for (const bad of ['no thanks', '0', 'yes']) {
    t.throws(() => seedDemo(bad), {
      instanceOf: ConfigError,
      message: `SEED_DEMO must be true or false, got '${bad}'`,
    });
  }
});
