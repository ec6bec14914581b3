import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, DECLARATION_GROUPS, DECLARED, environmentTable } from '../../infra/config/environment';
import fc from 'fast-check';
import { loadConfig } from '../../infra/config/load-config';
import { queuePrefix } from '../../infra/redis';

const root = path.resolve(__dirname, '../../..');
const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x', COMMAND_SIGNING_KEY: 'k'.repeat(32) };

/** Table rows as arrays of trimmed cells (prettier aligns the document's columns). */
function rows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '').trim()));
}

test('docs/configuration.md shows exactly the declared variables (npm run docs:config rewrites it)', (t) => {
  const doc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  const start = doc.indexOf('<!-- environment table');
  const end = doc.indexOf('<!-- end of environment table -->');
  t.true(start >= 0 && end > start, 'markers present');
  t.deepEqual(rows(doc.slice(start, end)), rows(environmentTable()));
});

test('every variable is declared once, and each has a row in docs/configuration.md’s generated table', (t) => {
  const names = DECLARATION_GROUPS.flatMap((group) => Object.keys(group));
  t.deepEqual(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'declared in two groups',
  );
  t.deepEqual(Object.keys(DECLARED), names);
  const doc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- environment table'), doc.indexOf('<!-- end of environment table -->'));
  const documented = new Set(rows(table).map(([name]) => name!.replace(/`/g, '')));
  t.deepEqual(
    names.filter((name) => !documented.has(name)),
    [],
    'declared but not in the table: npm run docs:config',
  );
  t.true(names.includes('COMMAND_TEST_PAUSE_MS') && names.includes('SEED_DEMO'));
});

/**
 * Defaults the generated table gives: its default cell, a "(default x)" or "x s when unset" its meaning
 * names for a derived one, and for a default that is another variable, that one's.
 */
function generatedDefaults(): Map<string, Set<string>> {
  const plain = (text: string) => text.replace(/`/g, '').trim();
  const defaults = new Map<string, Set<string>>();
  const table = rows(environmentTable()).slice(1);
  for (const [name, value, meaning] of table) {
    const said = /\(default ([^),]+)/.exec(meaning ?? '')?.[1];
    const seconds = /(\d+) s when unset/.exec(meaning ?? '')?.[1];
    const values = [
      plain(value!),
      ...(said ? [plain(said)] : []),
      ...(seconds ? [String(Number(seconds) * 1000)] : []),
    ];
    defaults.set(plain(name!), new Set(values));
  }
  for (const values of defaults.values())
    for (const value of values) for (const v of defaults.get(value) ?? []) values.add(v);
  return defaults;
}

/** What the hand-written parts of docs/configuration.md say a variable defaults to: [variable, default, where]. */
function handWrittenDefaults(doc: string): [string, string, string][] {
  const found: [string, string, string][] = [];
  const outside =
    doc.slice(0, doc.indexOf('<!-- environment table')) + doc.slice(doc.indexOf('<!-- end of environment table'));
  // Tables with a "default" column, or a "required" one saying "no (<default>)".
  let column: { index: number; kind: 'default' | 'required' } | undefined;
  for (const line of outside.split('\n')) {
    if (!line.startsWith('|')) {
      column = undefined;
      continue;
    }
    if (/^\|\s*-/.test(line)) continue;
    const cells = line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '').trim());
    const header = cells.findIndex((cell) => cell === 'default' || cell === 'required');
    if (cells[0] === 'variable' && header > 0) {
      column = { index: header, kind: cells[header] as 'default' | 'required' };
      continue;
    }
    if (!column) continue;
    const cell = cells[column.index] ?? '';
    const value = column.kind === 'default' ? cell : /^no \((.*)\)$/.exec(cell)?.[1];
    if (value === undefined) continue;
    for (const [, name] of cells[0]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g))
      found.push([name!, value.replace(/`/g, ''), line]);
  }
  // Prose: "`VAR` (`x` by default" and "`VAR`, default `x`" / "`VAR` (default `x`".
  const prose = outside.replace(/\s+/g, ' ');
  for (const match of prose.matchAll(/`([A-Z][A-Z0-9_]+)`,? \((?:`([^`]+)` by default|default `([^`]+)`)/g)) {
    found.push([match[1]!, (match[2] ?? match[3])!, match[0]]);
  }
  for (const match of prose.matchAll(/`([A-Z][A-Z0-9_]+)`, default `([^`]+)`/g))
    found.push([match[1]!, match[2]!, match[0]]);
  return found;
}

test('every default the hand-written parts of docs/configuration.md give agrees with the generated table', (t) => {
  const doc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  const generated = generatedDefaults();
  const found = handWrittenDefaults(doc);
  t.true(
    found.some(([name]) => name === 'BULL_BOARD_SESSION_TTL_MINUTES'),
    'the login table is read',
  );
  for (const [name, value, where] of found) {
    const known = generated.get(name);
    if (!known) continue; // test-only or process variables the table does not list
    t.true(known.has(value), `${name}: "${value}" in the prose, ${[...known].join(' or ')} in the table (${where})`);
  }
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}

test('every variable the code reads is declared (and so documented)', (t) => {
  const declared = new Set(Object.keys(DECLARED));
  // The suite's, benchmark's and tooling's own knobs are documented where they are used, not in the service's table.
  const testOnly = /^(TEST_|BENCH_|FUZZ_|DEV_PG_|DEV_REDIS_)/;
  const read = new Set<string>();
  for (const dir of ['api', 'workers', 'db', 'domain', 'infra', 'scripts']) {
    for (const file of sources(path.join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)|processCount\('([A-Z][A-Z0-9_]+)'/g)) {
        read.add((m[1] ?? m[2])!);
      }
    }
  }
  const undeclared = [...read].filter((name) => !declared.has(name) && !testOnly.test(name));
  t.deepEqual(undeclared, []);
  t.true(read.has('API_PROCESSES'), 'the scan finds the entry points’ variables');
});

test('EVENT_PUBLISH_WINDOW_MS=0 is accepted (publish right after each command), as documented', (t) => {
  t.is(loadConfig({ ...base, EVENT_PUBLISH_WINDOW_MS: '0' }).eventPublishWindowMs, 0);
  t.is(loadConfig(base).eventPublishWindowMs, 100);
});

test('every invalid or missing variable is named in one error', (t) => {
  const err = t.throws(
    () => loadConfig({ REDIS_URL: 'redis://x', MAX_TOP: '0', AUTH_MOCK: 'maybe', MAX_SKIP: '1.5' }),
    {
      instanceOf: ConfigError,
    },
  );
  for (const name of ['DATABASE_URL', 'COMMAND_SIGNING_KEY', 'MAX_TOP', 'AUTH_MOCK', 'MAX_SKIP']) {
    t.regex(err.message, new RegExp(name), err.message);
  }
  t.regex(err.message, /MAX_TOP must be an integer ≥ 1, got '0'/);
  // An empty value is unset, as `VAR=` or compose's `${VAR:-}` give it.
  t.is(loadConfig({ ...base, MAX_TOP: '', AUTH_MOCK: '' }).maxTop, 1000);
});

test('hours may be fractions; everything else keeps its documented default', (t) => {
  const config = loadConfig({ ...base, OUTBOX_RETENTION_HOURS: '0.01' });
  t.is(config.retention.outboxMs, 36_000);
  t.is(config.retention.commandLogMs, 168 * 3600_000);
  t.like(config.limits, { maxExpandDepth: 3, maxSkip: 100_000, rateLimitPerMinute: 0, maxExportsPerSubject: 2 });
  t.is(config.listenHost, '0.0.0.0');
  t.is(loadConfig({ ...base, AUTH_MOCK: 'true' }).listenHost, '127.0.0.1');
});

test('CORS_ORIGINS: off by default, `*`, or exact origins; anything a browser would never send is refused', (t) => {
  t.deepEqual(loadConfig(base).corsOrigins, []);
  t.is(loadConfig({ ...base, CORS_ORIGINS: '*' }).corsOrigins, '*');
  t.deepEqual(loadConfig({ ...base, CORS_ORIGINS: ' https://app.example.com , http://localhost:5173,' }).corsOrigins, [
    'https://app.example.com',
    'http://localhost:5173',
  ]);
  for (const bad of [
    'https://app.example.com/',
    'https://app.example.com/path',
    'app.example.com',
    'https://*.example.com',
    'https://App.example.com',
    '*,https://app.example.com',
    'ftp://files.example.com',
  ]) {
    const err = t.throws(() => loadConfig({ ...base, CORS_ORIGINS: bad }), { instanceOf: ConfigError }, bad);
    t.regex(err.message, /CORS_ORIGINS must be `\*` or comma-separated origins/, bad);
  }
});

test('ACCESS_LOG is on unless turned off', (t) => {
  t.true(loadConfig(base).accessLog);
  t.false(loadConfig({ ...base, ACCESS_LOG: 'false' }).accessLog);
});

test('DATABASE_REPLICA_URLS: comma-separated postgres URLs, trimmed; anything else refused at start', (t) => {
  const urls = (value: string) => loadConfig({ ...base, DATABASE_REPLICA_URLS: value }).replicas.urls;
  t.deepEqual(urls(''), []);
  t.deepEqual(urls(' postgres://a:5432/db , postgresql://b/db,'), ['postgres://a:5432/db', 'postgresql://b/db']);
  for (const bad of ['redis://a:6379', 'a:5432/db', 'postgres://ok/db,nonsense']) {
    t.throws(() => urls(bad), { message: /DATABASE_REPLICA_URLS/ }, bad);
  }
  t.deepEqual(loadConfig(base).replicas, { urls: [], waitMs: 250, maxLagMs: 2000 });
});

test('REDIS_CLUSTER_NODES: host:port seeds instead of REDIS_URL, exactly one of the two', (t) => {
  const { REDIS_URL: _url, ...noRedis } = base;
  const nodes = (value: string) => loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: value }).redis;
  t.deepEqual(loadConfig(base).redis, { url: 'redis://x' });
  t.deepEqual(nodes(' redis-1:6379 , 10.0.0.2:7000,'), {
    clusterNodes: [
      { host: 'redis-1', port: 6379 },
      { host: '10.0.0.2', port: 7000 },
    ],
  });
  for (const bad of ['redis-1', 'redis://a:6379', 'a:0', 'a:65536', 'a:b', ':6379', 'a b:1']) {
    t.throws(() => nodes(bad), { instanceOf: ConfigError, message: /REDIS_CLUSTER_NODES/ }, bad);
  }
  t.throws(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: 'a:1' }), { message: /exactly one of REDIS_URL/ });
  t.throws(() => loadConfig(noRedis), { message: /exactly one of REDIS_URL/ });
});

test('QUEUE_PREFIX without braces (they would move the cluster hash tag); queue prefixes per kind of Redis', (t) => {
  t.throws(() => loadConfig({ ...base, QUEUE_PREFIX: 'a{b}' }), { message: /QUEUE_PREFIX/ });
  const one = loadConfig({ ...base, QUEUE_PREFIX: 'app' });
  t.is(queuePrefix(one, 'commands'), 'app', 'one Redis: the layout existing deployments have');
  const { REDIS_URL: _url, ...noRedis } = base;
  const clustered = loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: 'a:1', QUEUE_PREFIX: 'app' });
  t.is(queuePrefix(clustered, 'commands'), '{app:commands}');
  t.is(queuePrefix(clustered, 'views'), '{app:views}');
});

test('REDIS_SENTINELS + REDIS_SENTINEL_NAME: Redis behind Sentinel, the third kind of Redis', (t) => {
  const { REDIS_URL: _url, ...noRedis } = base;
  const sentinel = (sentinels: string, name = 'mymaster') =>
    loadConfig({ ...noRedis, REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: name }).redis;
  t.deepEqual(sentinel(' s-1:26379 , 10.0.0.3:26380,', ' mymaster '), {
    sentinels: [
      { host: 's-1', port: 26379 },
      { host: '10.0.0.3', port: 26380 },
    ],
    sentinelName: 'mymaster',
  });
  for (const bad of ['s-1', 'redis://a:26379', 'a:0', 'a:65536', ':26379']) {
    t.throws(() => sentinel(bad), { instanceOf: ConfigError, message: /REDIS_SENTINELS/ }, bad);
  }
  t.throws(() => sentinel('a:1', ''), { instanceOf: ConfigError, message: /REDIS_SENTINEL_NAME/ });
  t.throws(() => sentinel('a:1', '  '), { instanceOf: ConfigError, message: /REDIS_SENTINEL_NAME/ });
  t.throws(() => loadConfig({ ...base, REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm' }), {
    message: /exactly one of REDIS_URL/,
  });
  t.throws(
    () => loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', REDIS_SENTINEL_NAME: 'm' }),
    {
      message: /exactly one of REDIS_URL/,
    },
  );
  t.throws(() => loadConfig({ ...base, REDIS_SENTINEL_NAME: 'm' }), { message: /only read with REDIS_SENTINELS/ });
  // One primary holds every key: the queues keep the one-server layout.
  const watched = loadConfig({ ...noRedis, REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm', QUEUE_PREFIX: 'app' });
  t.is(queuePrefix(watched, 'commands'), 'app');
});

test('REDIS_SENTINELS and REDIS_SENTINEL_NAME: any text is either refused with a ConfigError or read back', (t) => {
  const { REDIS_URL: _url, ...noRedis } = base;
  const item = fc.tuple(
    fc.oneof(fc.domain(), fc.ipV4(), fc.string({ maxLength: 12 })),
    fc.oneof(fc.integer({ min: -5, max: 70_000 }).map(String), fc.string({ maxLength: 6 })),
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(item, { maxLength: 4 }).map((items) => items.map(([host, port]) => `${host}:${port}`).join(',')),
        fc.string({ maxLength: 40 }),
      ),
      fc.string({ maxLength: 12 }),
      (value, name) => {
        let redis;
        try {
          redis = loadConfig({ ...noRedis, REDIS_SENTINELS: value, REDIS_SENTINEL_NAME: name }).redis;
        } catch (err) {
          return err instanceof ConfigError;
        }
        const items = value
          .split(',')
          .map((each) => each.trim())
          .filter(Boolean);
        return (
          'sentinels' in redis &&
          redis.sentinelName === name.trim() &&
          redis.sentinelName !== '' &&
          redis.sentinels.length === items.length &&
          redis.sentinels.every(
            ({ host, port }, i) =>
              `${host}:${port}` === items[i]!.replace(/:0*(\d+)$/, ':$1') && port >= 1 && port <= 65535,
          )
        );
      },
    ),
  );
  t.pass();
});

test('REDIS_CLUSTER_NODES: any text is either refused with a ConfigError or read back item by item', (t) => {
  const { REDIS_URL: _url, ...noRedis } = base;
  const seed = fc.tuple(
    fc.oneof(fc.domain(), fc.ipV4(), fc.string({ maxLength: 12 })),
    fc.oneof(fc.integer({ min: -5, max: 70_000 }).map(String), fc.string({ maxLength: 6 })),
  );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(seed, { maxLength: 4 }).map((seeds) => seeds.map(([host, port]) => `${host}:${port}`).join(',')),
        fc.string({ maxLength: 40 }),
      ),
      (value) => {
        let redis;
        try {
          redis = loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: value }).redis;
        } catch (err) {
          return err instanceof ConfigError;
        }
        const items = value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean);
        return (
          'clusterNodes' in redis &&
          redis.clusterNodes.length === items.length &&
          redis.clusterNodes.every(
            ({ host, port }, i) =>
              `${host}:${port}` === items[i]!.replace(/:0*(\d+)$/, ':$1') && port >= 1 && port <= 65535,
          )
        );
      },
    ),
  );
  t.pass();
});

test('REDIS_WAIT_REPLICAS: one replica behind Sentinel by default, none otherwise, never on a Cluster', (t) => {
  const { REDIS_URL: _url, ...noRedis } = base;
  const onSentinel = { ...noRedis, REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_NAME: 'm' };
  t.deepEqual(loadConfig(onSentinel).redisDurability, { replicas: 1, timeoutMs: 500 });
  t.deepEqual(loadConfig(base).redisDurability, { replicas: 0, timeoutMs: 500 });
  t.deepEqual(loadConfig({ ...base, REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '50' }).redisDurability, {
    replicas: 2,
    timeoutMs: 50,
  });
  t.is(loadConfig({ ...onSentinel, REDIS_WAIT_REPLICAS: '0' }).redisDurability.replicas, 0);
  for (const bad of ['-1', '1.5', 'one']) {
    t.throws(() => loadConfig({ ...base, REDIS_WAIT_REPLICAS: bad }), { message: /REDIS_WAIT_REPLICAS/ }, bad);
  }
  t.throws(() => loadConfig({ ...base, REDIS_WAIT_TIMEOUT_MS: '0' }), { message: /REDIS_WAIT_TIMEOUT_MS/ });
  t.is(loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: 'a:1' }).redisDurability.replicas, 0);
  t.throws(() => loadConfig({ ...noRedis, REDIS_CLUSTER_NODES: 'a:1', REDIS_WAIT_REPLICAS: '1' }), {
    instanceOf: ConfigError,
    message: /not supported with REDIS_CLUSTER_NODES/,
  });
});

test('webhooks: WEBHOOK_RETRY_SCHEDULE parsed at start (a bad one refused), the guard on by default', (t) => {
  const config = loadConfig(base);
  t.deepEqual(config.webhooks.retrySchedule, [5e3, 3e4, 12e4, 6e5, 36e5, 216e5, 864e5]);
  t.false(config.webhooks.allowPrivateNetworks);
  t.is(config.webhooks.timeoutMs, 10_000);
  t.deepEqual(loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '200ms,400ms' }).webhooks.retrySchedule, [200, 400]);
  for (const bad of ['5', '1x', '-5s', '9d', '1s;2s']) {
    t.throws(
      () => loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: bad }),
      { instanceOf: ConfigError, message: /WEBHOOK_RETRY_SCHEDULE/ },
      bad,
    );
  }
});

test('METRICS_PEERS: kind=url items, each kind once and never api; anything else refused at start', (t) => {
  const peers = (value: string) => loadConfig({ ...base, METRICS_PEERS: value }).metrics.peers;
  t.deepEqual(loadConfig(base).metrics, { enabled: false, port: undefined, peers: [] });
  t.deepEqual(peers(' commands=http://127.0.0.1:9465/metrics , views=https://views:9464/metrics?a=b,'), [
    { process: 'commands', url: 'http://127.0.0.1:9465/metrics' },
    { process: 'views', url: 'https://views:9464/metrics?a=b' },
  ]);
  for (const bad of [
    'http://127.0.0.1:9465/metrics',
    'api=http://127.0.0.1:9465/metrics',
    'a=http://x/metrics,a=http://y/metrics',
    'Commands=http://x/metrics',
    'commands=ftp://x/metrics',
    'commands=',
    'process label=http://x/metrics',
  ]) {
    t.throws(() => peers(bad), { instanceOf: ConfigError, message: /METRICS_PEERS/ }, bad);
  }
});
