import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { ENVIRONMENT, TRACING_ENVIRONMENT } from '../../infra/config/environment';

// No Docker engine runs here: the file is checked for syntax and kept honest against the code.
const root = path.resolve(__dirname, '../../..');
const doc = parseDocument(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
type Service = {
  command?: string[];
  healthcheck?: unknown;
  environment?: Record<string, unknown>;
  deploy?: { replicas?: unknown };
  build?: { dockerfile?: string };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
};
const compose = doc.toJS({ maxAliasCount: 100 }) as { services: Record<string, Service> };

test('parses without errors', (t) => {
  t.deepEqual(doc.errors, []);
});

test('has the stores, the migration, the API and the three worker pools', (t) => {
  t.deepEqual(Object.keys(compose.services).sort(), [
    'api',
    'jaeger',
    'migrate',
    'postgres',
    'postgres-replica',
    'redis',
    'worker-commands',
    'worker-notifications',
    'worker-views',
  ]);
  for (const name of ['postgres', 'redis', 'api']) t.truthy(compose.services[name]!.healthcheck, `${name} healthcheck`);
  for (const name of ['worker-commands', 'worker-views', 'worker-notifications']) {
    t.regex(String(compose.services[name]!.deploy?.replicas), /^\$\{[A-Z_]+:-\d+\}$/, `${name} replicas settable`);
  }
});

test('every command runs a file the build produces, and the Dockerfile exists', (t) => {
  for (const [name, service] of Object.entries(compose.services)) {
    if (!service.command || service.command[0] !== 'node') continue;
    const file = service.command.slice(1).find((arg) => !arg.startsWith('--'))!;
    const script = file.replace(/^dist\//, '').replace(/\.js$/, '.ts');
    t.true(existsSync(path.join(root, script)), `${name}: ${script}`);
    t.true(existsSync(path.join(root, service.build?.dockerfile ?? 'missing')), `${name} dockerfile`);
  }
});

test('app services get the configuration variables the code reads, and wait for a migrated store', (t) => {
  const api = compose.services.api!;
  for (const name of [
    'DATABASE_URL',
    'REDIS_URL',
    'AUTH_MOCK',
    'AUTH_AUDIENCE',
    'COMMAND_TIMEOUT_MS',
    'MAX_TOP',
    'PORT',
    'COMMAND_SIGNING_KEY',
    'RATE_LIMIT_PER_MINUTE',
  ]) {
    t.true(name in (api.environment ?? {}), name);
  }
  for (const name of Object.keys(api.environment ?? {})) {
    t.true(name in ENVIRONMENT || name in TRACING_ENVIRONMENT, `${name} is declared in infra/config/environment.ts`);
  }
  // Real authentication, production mode and a limiter out of the box (DESIGN §13).
  const env = api.environment ?? {};
  t.regex(String(env.NODE_ENV), /:-production\}$/);
  t.regex(String(env.AUTH_MOCK), /:-false\}$/);
  t.regex(String(env.AUTH_ISSUER_BASE_URL), /:-https:\/\/.+\}$/);
  t.regex(String(env.AUTH_AUDIENCE), /:-.+\}$/);
  t.regex(String(env.RATE_LIMIT_PER_MINUTE), /:-6000\}$/);
  t.regex(String(env.COMMAND_SIGNING_KEY), /^\$\{COMMAND_SIGNING_KEY:\?/);
  t.is(api.depends_on?.migrate?.condition, 'service_completed_successfully');
  const redis = compose.services.redis as { command?: string[] };
  t.true(redis.command?.includes('noeviction'));
});

test('processes run as their package.json scripts say, V8 flags included (compose, Dockerfile)', (t) => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const scripts: Record<string, string> = {
    api: 'api',
    'worker-commands': 'worker:commands',
    'worker-views': 'worker:views',
    'worker-notifications': 'worker:notifications',
  };
  for (const [service, script] of Object.entries(scripts)) {
    t.is(compose.services[service]!.command!.join(' '), pkg.scripts[script] ?? 'missing script', service);
  }
  const dockerfile = readFileSync(path.join(root, 'scripts/docker/Dockerfile'), 'utf8');
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  t.is(cmd.join(' '), pkg.scripts.api ?? 'missing script', 'Dockerfile CMD is npm run api');
});

test('metrics: the API is told METRICS_ENABLED and every worker pool a METRICS_PORT', (t) => {
  t.regex(String(compose.services.api!.environment?.METRICS_ENABLED), /^\$\{METRICS_ENABLED:-(true|false)\}$/);
  for (const name of ['worker-commands', 'worker-views', 'worker-notifications']) {
    t.regex(String(compose.services[name]!.environment?.METRICS_PORT), /^\$\{METRICS_PORT:-\d+\}$/, name);
  }
});

test('tracing: off unless OTEL_EXPORTER_OTLP_ENDPOINT is given; Jaeger only behind the tracing profile', (t) => {
  const env = compose.services.api!.environment ?? {};
  t.is(env.OTEL_EXPORTER_OTLP_ENDPOINT, '${OTEL_EXPORTER_OTLP_ENDPOINT:-}');
  t.deepEqual(compose.services.jaeger!.profiles, ['tracing']);
  const command = compose.services.jaeger!.command ?? [];
  t.true(command.join(' ').includes('0.0.0.0:4318'), 'the OTLP/HTTP port listens beyond the container');
});

test('a read replica behind a profile: made by pg_basebackup -R from postgres, which allows replication', (t) => {
  const replica = compose.services['postgres-replica'] as Service & { profiles?: string[]; volumes?: string[] };
  t.deepEqual(replica.profiles, ['replica']);
  t.regex(replica.command!.join(' '), /pg_basebackup -h postgres .* -R /);
  t.regex(replica.command!.join(' '), /hot_standby=on/);
  t.is(replica.depends_on?.postgres?.condition, 'service_healthy');
  const primary = compose.services.postgres as Service & { volumes?: string[] };
  const hba = primary.volumes!.find((v) => v.includes('docker-entrypoint-initdb.d'))!;
  const script = readFileSync(path.join(root, hba.split(':')[0]!), 'utf8');
  t.regex(script, /host\s+replication\s+/);
  for (const name of ['DATABASE_REPLICA_URLS', 'REPLICA_WAIT_MS', 'REPLICA_MAX_LAG_MS']) {
    t.true(name in (compose.services.api!.environment ?? {}), name);
  }
});
