import { EnvError, bool, cleanEnv, makeValidator, str, type ValidatorSpec } from 'envalid';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../../domain/webhooks/retry-schedule';

/**
 * Every environment variable a process of the service reads, declared once with envalid: its
 * parser, default and description, in the group of the processes that read it. Nothing else reads
 * process.env (a test keeps it so): `loadConfig` turns ENVIRONMENT into the AppConfig type and
 * values, `readVariables` cleans the few others where their process needs them, and
 * `environmentTable` renders docs/configuration.md's table from the same declarations (a test keeps
 * the two equal), so no setting is read without being documented.
 */

export class ConfigError extends Error {}

/** An integer of at least `min` (envalid's num() would also take 1.5 or 1e3). */
function integer(min: number) {
  return makeValidator<number>((raw) => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isInteger(n) || n < min) throw new EnvError(`must be an integer ≥ ${min}`);
    return n;
  });
}

/** A positive number of hours (fractions allowed: 0.01 h = 36 s, for benchmarks and tests). */
const hours = makeValidator<number>((raw) => {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0) throw new EnvError('must be a positive number of hours');
  return n;
});

/** The non-empty items of a comma-separated setting, trimmed. */
function commaItems(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A part of the URL `text` names, or undefined when it is no URL. */
function urlPart(text: string, part: 'origin' | 'protocol'): string | undefined {
  try {
    return new URL(text)[part];
  } catch {
    return undefined;
  }
}

/**
 * `CORS_ORIGINS`: `*`, or exact origins (scheme://host[:port], as a browser sends `Origin`), comma-
 * separated. A path, a trailing slash or a wildcard inside a name would never match: refused.
 */
const corsOrigins = makeValidator<string>((raw) => {
  const items = commaItems(raw);
  if (items.length === 1 && items[0] === '*') return '*';
  for (const item of items) {
    if (urlPart(item, 'origin') !== item || !/^https?:/.test(item) || item.includes('*')) {
      throw new EnvError(
        `must be \`*\` or comma-separated origins like https://app.example.com (no path), not '${item}'`,
      );
    }
  }
  return items.join(',');
});

/** Comma-separated postgres:// URLs (empty: none); each must parse, so a typo fails at start. */
const databaseUrls = makeValidator<string>((raw) => {
  const items = commaItems(raw);
  for (const item of items) {
    const protocol = urlPart(item, 'protocol');
    if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
      throw new EnvError('must be comma-separated postgres:// URLs');
    }
  }
  return items.join(',');
});

/** Comma-separated host:port items (Redis Cluster seeds, sentinels; empty: none); each must name a port. */
const hostPorts = makeValidator<string>((raw) => {
  const items = commaItems(raw);
  for (const item of items) {
    const match = /^(.+):(\d{1,5})$/.exec(item);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535 || /[\s/]/.test(match[1]!)) {
      throw new EnvError(`must be comma-separated host:port items like redis-1:6379, not '${item}'`);
    }
  }
  return items.join(',');
});

/**
 * METRICS_PEERS: comma-separated `kind=url` items, the processes whose scrapes the API's `/metrics`
 * merges into its own under `process="kind"`. A kind is a label value (lower case); `api` names the
 * API's own samples, so no peer may take it.
 */
const metricsPeers = makeValidator<string>((raw) => {
  const items = commaItems(raw);
  const kinds = new Set<string>();
  for (const item of items) {
    const [kind = '', url = ''] = item.split(/=(.*)/s);
    const protocol = urlPart(url, 'protocol');
    if (
      !/^[a-z][a-z0-9_]*$/.test(kind) ||
      kind === 'api' ||
      kinds.has(kind) ||
      (protocol !== 'http:' && protocol !== 'https:')
    ) {
      throw new EnvError(
        `must be comma-separated kind=url items like commands=http://127.0.0.1:9465/metrics (each kind lower case, once, not api), not '${item}'`,
      );
    }
    kinds.add(kind);
  }
  return items.join(',');
});

/** QUEUE_PREFIX: braces would move the Redis Cluster hash tag the queue prefixes rely on. */
const queuePrefix = makeValidator<string>((raw) => {
  if (raw === '' || /[{}]/.test(raw)) throw new EnvError('must be a non-empty prefix without `{` or `}`');
  return raw;
});

/** An integer ≥ 0, or empty for the setting's automatic value. */
const integerOrAuto = makeValidator<string>((raw) => {
  const n = Number(raw);
  if (raw.trim() !== '' && (!Number.isInteger(n) || n < 0))
    throw new EnvError('must be empty (automatic) or an integer ≥ 0');
  return raw.trim();
});

/** WEBHOOK_RETRY_SCHEDULE: comma-separated durations (`5s,30s,2m`), parsed at start. */
const retrySchedule = makeValidator<string>((raw) => {
  try {
    parseRetrySchedule(raw);
  } catch (err) {
    throw new EnvError(`must be comma-separated durations like 5s,30s,2m,1h: ${(err as Error).message}`);
  }
  return raw;
});

const nonNegative = integer(0);
const positive = integer(1);

export const ENVIRONMENT = {
  PORT: nonNegative({ default: 3000, desc: 'API port (0: any free port)' }),
  LISTEN_HOST: str({
    default: '',
    desc: 'interface the API listens on; empty: 127.0.0.1 with mock authentication, else 0.0.0.0',
  }),
  DATABASE_URL: str({ desc: 'Postgres; `npm start` and `npm test` start local servers when unset' }),
  DATABASE_REPLICA_URLS: databaseUrls({
    default: '',
    desc: 'comma-separated hot standbys of DATABASE_URL (streaming replicas): the API reads from them; read-your-writes by X-Consistency-Token',
  }),
  REPLICA_WAIT_MS: nonNegative({
    default: 250,
    desc: 'how long a read carrying X-Consistency-Token waits for a replica to replay that far before the primary serves it',
  }),
  REPLICA_MAX_LAG_MS: nonNegative({
    default: 2000,
    desc: 'replicas further behind are skipped by reads without a token (the primary serves when none is within)',
  }),
  REDIS_URL: str({
    default: '',
    desc: 'Redis, used only by BullMQ and the limits; must run with maxmemory-policy noeviction. Exactly one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS',
  }),
  REDIS_CLUSTER_NODES: hostPorts({
    default: '',
    desc: "a Redis Cluster instead of REDIS_URL: comma-separated host:port seeds (any of its primaries); each queue's keys are hash-tagged `{QUEUE_PREFIX:queue}` so they share a slot",
  }),
  REDIS_SENTINELS: hostPorts({
    default: '',
    desc: 'Redis behind Sentinel instead of REDIS_URL: comma-separated host:port of the sentinels; every connection asks them for the current primary of REDIS_SENTINEL_NAME and follows a failover',
  }),
  REDIS_SENTINEL_NAME: str({
    default: '',
    desc: 'the master group name the sentinels monitor (`sentinel monitor <name> …`); required with REDIS_SENTINELS',
  }),
  REDIS_WAIT_REPLICAS: integerOrAuto({
    default: '',
    desc: 'Redis replicas that must acknowledge a burst of published events (WAIT) before the outbox marks it published, so a failover cannot lose it; empty: 1 with REDIS_SENTINELS, else 0 (not supported on a Redis Cluster)',
  }),
  REDIS_WAIT_TIMEOUT_MS: positive({
    default: 500,
    desc: 'how long a publish waits for those acknowledgements; events not acknowledged in time stay unpublished in the outbox and the sweep publishes them again',
  }),
  QUEUE_PREFIX: queuePrefix({
    default: 'emapi',
    desc: 'prefix of every BullMQ key: lets deployments share a Redis (no `{` or `}`)',
  }),
  NODE_ENV: str({ default: '', desc: '`production` refuses mock authentication; `test` lowers the default log level' }),
  LOG_LEVEL: str({
    default: '',
    desc: 'pino level (default `info`, `warn` under NODE_ENV=test)',
  }),
  ACCESS_LOG: bool({
    default: true,
    desc: 'one access line per request at `info` (method, URL, status, duration, request id, subject; 5xx at `error`); `false`: 5xx lines only',
  }),
  CORS_ORIGINS: corsOrigins({
    default: '',
    desc: 'origins browsers may call the API from (CORS): exact origins, comma-separated (`https://app.example.com`), or `*`; empty: off',
  }),
  AUTH_MOCK: bool({
    default: false,
    desc: 'mock authentication: every request is authenticated, no token read; never implied (npm start sets it when no AUTH_* is given); the API then listens on 127.0.0.1',
  }),
  AUTH_MOCK_ROLE: str({
    default: 'Admin',
    choices: ['Admin', 'User', 'none'],
    desc: 'role of the mock caller',
  }),
  AUTH_ISSUER_BASE_URL: str({ default: '', desc: 'OIDC issuer; discovery finds the JWKS' }),
  AUTH_ISSUER: str({ default: '', desc: 'explicit issuer (the tokens’ `iss`), with AUTH_JWKS_URI or AUTH_SECRET' }),
  AUTH_JWKS_URI: str({ default: '', desc: 'explicit JWKS instead of discovery' }),
  AUTH_AUDIENCE: str({ default: '', desc: 'required audience (mandatory when authentication is on)' }),
  AUTH_SECRET: str({ default: '', desc: 'symmetric tokens for local use (`npm run token`)' }),
  AUTH_TOKEN_SIGNING_ALG: str({ default: '', desc: 'HS256, HS384 or HS512 with AUTH_SECRET (default HS256)' }),
  AUTH_ROLES_CLAIM: str({ default: 'roles', desc: 'claim holding the role: a string or an array of strings' }),
  COMMAND_SIGNING_KEY: str({
    desc: 'HMAC key (32+ characters) every process shares: the API signs each command, workers refuse what does not verify; `npm start` generates one into .data/',
  }),
  COMMAND_TIMEOUT_MS: positive({ default: 10_000, desc: 'how long the API awaits a command before answering 202' }),
  BATCH_MAX_REQUESTS: positive({ default: 1000, desc: 'requests in one `POST /$batch` (413)' }),
  BATCH_MAX_BYTES: positive({ default: 16 * 1024 * 1024, desc: 'body of one `POST /$batch` (413)' }),
  BATCH_TIMEOUT_MS: positive({
    default: 60_000,
    desc: 'how long the API awaits a `$batch` before answering 202 + `/Commands/<id>`',
  }),
  BATCH_MAX_READ_ROWS: positive({
    default: 100_000,
    desc: 'rows the GETs of one `$batch` may read at most, summed over its GETs from their `$top`, `$skip` and `$expand` before anything runs (400)',
  }),
  BATCH_READ_TIMEOUT_MS: positive({
    default: 30_000,
    desc: 'time the GETs of one `$batch` may run in all; a GET not run, or cut short, by then answers 429 + Retry-After',
  }),
  BATCH_GROUP_READ_TIMEOUT_MS: positive({
    default: 2_000,
    desc: 'time the GETs inside one `$batch` atomicity group may run in all (they hold its locks); past it the group fails as a unit (429, the others 424)',
  }),
  MAX_TOP: positive({ default: 1000, desc: 'largest `$top` (and cap of the default page of 60)' }),
  WORKER_CONCURRENCY: positive({ default: 16, desc: 'jobs one worker process runs at once' }),
  DB_POOL_MAX: positive({ default: 20, desc: 'Postgres connections per process' }),
  EVENT_PUBLISH_WINDOW_MS: nonNegative({
    // 100 rather than 25 (issue 28): bursts 4× as large halve the view and notification workers' CPU
    // per write at c=32, for up to 75 ms more before an event reaches search (p99 ~200 ms of the 1 s target).
    default: 100,
    desc: 'how long a command worker gathers committed events before publishing them together (0: right after each command)',
  }),
  WORKER_LOCK_DURATION_MS: positive({
    default: undefined,
    desc: 'how soon a job of a dead worker runs again (BullMQ lock; 30 s when unset); give every worker of a queue the same value',
  }),
  WORKER_STALLED_INTERVAL_MS: positive({
    default: undefined,
    desc: 'how often workers look for such jobs (BullMQ; 30 s when unset)',
  }),
  MAX_EXPAND_DEPTH: positive({ default: 3, desc: '`$expand` depth, nesting and `A/B/C` paths alike (400)' }),
  MAX_EXPANSIONS: positive({ default: 10, desc: 'expansions in one request, all levels (400)' }),
  MAX_EXPAND_TOP: positive({
    default: 100,
    desc: 'items of an expanded collection without `$top` (owned collections are never cut); a larger nested `$top` is a 400',
  }),
  MAX_SYNTAX_NODES: positive({
    default: 100,
    desc: 'syntax nodes of one `$filter`, `$orderby`, `$expand` or `$search` (400)',
  }),
  MAX_SKIP: nonNegative({ default: 100_000, desc: 'largest `$skip` (400 naming keyset paging)' }),
  COUNT_LIMIT: positive({
    default: 10_000,
    desc: 'rows a filtered `$count` counts; past it the count is this number with `X-Total-Count-Limit-Exceeded: true` (a whole set is always counted exactly)',
  }),
  SEARCH_COUNT_LIMIT: positive({
    default: 1000,
    desc: 'rows a `$count` with `$search` counts (as COUNT_LIMIT: past it, this number and `X-Total-Count-Limit-Exceeded: true`)',
  }),
  STATEMENT_TIMEOUT_MS: positive({
    default: 10_000,
    desc: 'statement time of a read, exports excepted (503 + Retry-After)',
  }),
  MAX_RESPONSE_BYTES: positive({
    default: 32 * 1024 * 1024,
    desc: 'response size, checked in Postgres (400 naming `$top`/`$expand`)',
  }),
  MAX_PATCH_OPERATIONS: positive({ default: 100, desc: 'JSON Patch operations (400, before queuing)' }),
  MAX_PATCHED_DOCUMENT_BYTES: positive({
    default: 1024 * 1024,
    desc: 'the patched document, tracked per operation (400)',
  }),
  MAX_GEOMETRY_LENGTH: positive({
    default: 500_000,
    desc: 'characters of one WKT geometry (400 naming the field, before any parser reads it)',
  }),
  MAX_GEOMETRY_VERTICES: positive({
    default: 50_000,
    desc: 'coordinates of one WKT geometry, all its parts together (400 naming the field)',
  }),
  MAX_GEOMETRY_DEPTH: positive({
    default: 8,
    desc: 'levels of parentheses in one WKT geometry; a MULTIPOLYGON has 3 (400 naming the field)',
  }),
  RATE_LIMIT_PER_MINUTE: nonNegative({
    default: 0,
    desc: 'requests per caller per minute across API processes (0: off; 6000 in docker-compose.yml); 429 + Retry-After',
  }),
  MAX_PENDING_COMMANDS_PER_SUBJECT: positive({
    default: 2000,
    desc: 'writes queued or running per caller, a `$batch` weighing its writes: two full batches of BATCH_MAX_REQUESTS (429)',
  }),
  MAX_EXPORTS_PER_SUBJECT: positive({ default: 2, desc: 'exports per caller at once, across API processes (429)' }),
  EXPORT_STALL_MS: positive({ default: 60_000, desc: 'an export reader that takes no byte this long is dropped' }),
  CHANGES_HEARTBEAT_MS: positive({
    default: 15_000,
    desc: 'GET /Changes: a `: keep-alive` comment line this often on every open stream',
  }),
  CHANGES_POLL_MS: positive({
    default: 5000,
    desc: 'GET /Changes: the activity log is read this often even without a notification (the safety net)',
  }),
  CHANGES_MAX_LISTENERS: positive({
    default: 2000,
    desc: 'GET /Changes streams one API process serves at once (503 + Retry-After)',
  }),
  CHANGES_MAX_LISTENERS_PER_SUBJECT: positive({
    default: 100,
    desc: 'GET /Changes streams of one caller in one API process (429 + Retry-After)',
  }),
  CHANGES_STALL_MS: positive({
    default: 60_000,
    desc: 'GET /Changes: a stream with bytes waiting whose client takes none this long is dropped',
  }),
  CHANGES_MAX_BUFFER_BYTES: positive({
    default: 1024 * 1024,
    desc: 'GET /Changes: bytes a stream may have waiting for its client before it is dropped (a slow listener)',
  }),
  CHANGES_ROLE_RECHECK_MS: positive({
    default: 60_000,
    desc: 'GET /Changes: every open stream’s caller is checked again this often (the service’s role grants can be revoked); a stream whose caller lost User and Admin ends with a last comment',
  }),
  BULL_BOARD_READ_ONLY: bool({ default: true, desc: 'Bull Board shows but refuses its actions; `false` allows them' }),
  BULL_BOARD_OIDC_ISSUER: str({
    default: '',
    desc: 'OIDC issuer of the Bull Board login (discovery; authorization code + PKCE); unset: no login, `/admin/queues` takes bearer tokens only',
  }),
  BULL_BOARD_OIDC_CLIENT_ID: str({
    default: '',
    desc: 'client id registered at that issuer (required with the login)',
  }),
  BULL_BOARD_OIDC_CLIENT_SECRET: str({
    default: '',
    desc: 'client secret of a confidential client (`client_secret_basic`); unset: a public client, PKCE only',
  }),
  BULL_BOARD_OIDC_SCOPES: str({
    default: 'openid profile',
    desc: 'scopes the login asks for (`openid` is always added); add the one that puts AUTH_ROLES_CLAIM into the ID token or userinfo if the issuer needs one',
  }),
  BULL_BOARD_PUBLIC_URL: str({
    default: '',
    desc: 'origin browsers reach the API at (`https://api.example.com`, no path; required with the login): the redirect URI is `<it>/admin/queues/auth/callback`; `https` makes the cookies Secure',
  }),
  BULL_BOARD_SESSION_SECRET: str({
    default: '',
    desc: 'key (32+ characters) the login session cookie is encrypted with; every API process shares it; required with the login',
  }),
  BULL_BOARD_SESSION_TTL_MINUTES: integer(1)({
    default: 60,
    desc: 'how long a Bull Board login (and the roles it was given) lasts before the browser is sent to the issuer again',
  }),
  OUTBOX_RETENTION_HOURS: hours({ default: 24, desc: 'how long published events are kept' }),
  COMMAND_LOG_RETENTION_HOURS: hours({
    default: 168,
    desc: 'how long command-log entries (the Idempotency-Key window) are kept',
  }),
  METRICS_ENABLED: bool({
    default: false,
    desc: '`GET /metrics` on the API port (Prometheus text, no token); off: a 404 like any unknown route; `npm start` sets it',
  }),
  METRICS_PORT: nonNegative({
    default: undefined,
    desc: 'worker processes serve `GET /metrics` on this port (on LISTEN_HOST’s interface); under one primary the primary serves all its processes’ sum there; unset: none',
  }),
  METRICS_PEERS: metricsPeers({
    default: '',
    desc: '`kind=url` items whose scrapes the API’s `/metrics` merges into its own, each sample labelled `process` (its own: `api`); a peer silent for 2 s is left out (`emapi_metrics_peer_up` 0); `npm start` sets it',
  }),
  RETENTION_INTERVAL_MS: positive({
    default: 60_000,
    desc: 'how often the one retention job runs (a job scheduler on the `maintenance` queue)',
  }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool({
    default: false,
    desc: 'webhook URLs may point at loopback, private, link-local, unique-local, CGNAT and other non-public addresses (checked on `/Subscriptions` writes and again at every delivery); for local development and tests only',
  }),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule({
    default: DEFAULT_RETRY_SCHEDULE,
    desc: 'waits before each retry of a failed webhook delivery (`ms`, `s`, `m`, `h`, `d`; at most 20, each ≤ 7d); after the last the job is failed (`/Jobs`, Bull Board)',
  }),
  WEBHOOK_TIMEOUT_MS: positive({
    default: 10_000,
    desc: 'a webhook receiver must answer 2xx within this long (connecting included), or the attempt fails',
  }),
  WEBHOOK_CONCURRENCY: positive({
    default: 16,
    desc: 'webhook deliveries one notification worker process makes at once',
  }),
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: positive({
    default: 4,
    desc: 'webhook deliveries to one subscription one notification worker process makes at once: a slow receiver cannot hold the other subscriptions’ slots',
  }),
  WEBHOOK_SLOW_LANE_CONCURRENCY: positive({
    default: 4,
    desc: 'webhook deliveries at once, per process, to subscriptions whose last attempt failed or took over 1 s, and retries (one at a time per subscription); at most WEBHOOK_CONCURRENCY − 1',
  }),
  WEBHOOK_MAX_SUBSCRIPTIONS: positive({ default: 100, desc: 'webhook subscriptions in all (409 beyond)' }),
  WEBHOOK_MAX_EVENT_PATTERNS: positive({ default: 50, desc: '`Events` entries of one subscription (400)' }),
  WEBHOOK_MAX_URL_LENGTH: positive({ default: 2048, desc: 'characters of a subscription `Url` (400)' }),
  WEBHOOK_MAX_DESCRIPTION_LENGTH: positive({
    default: 1000,
    desc: 'characters of a subscription `Description` (400)',
  }),
  WEBHOOK_DELIVERY_RETENTION_HOURS: hours({
    default: 168,
    desc: 'how long webhook delivery attempts (`/Subscriptions/<id>/Deliveries`) are kept',
  }),
};

const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'];
const SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
];

/**
 * The OpenTelemetry variables (the standard OTEL_* names) the service honours: read first thing by
 * every entry point (infra/tracing/tracing.ts), before the rest of the configuration. The exporter
 * reads the endpoints and headers itself; the others are read here.
 */
export const TRACING_ENVIRONMENT = {
  OTEL_EXPORTER_OTLP_ENDPOINT: str({
    default: '',
    desc: 'turns tracing on (OpenTelemetry, OTLP over HTTP): the collector’s base URL, e.g. `http://localhost:4318` (spans go to `/v1/traces`); empty: tracing off, no OpenTelemetry SDK or instrumentation loaded',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: str({
    default: '',
    desc: 'the full traces URL instead (also turns tracing on)',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: str({
    default: 'http/protobuf',
    choices: OTLP_PROTOCOLS,
    desc: '`http/protobuf` or `http/json` (gRPC is not offered)',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: str({
    default: '',
    choices: ['', ...OTLP_PROTOCOLS],
    desc: 'the same for traces only (wins over OTEL_EXPORTER_OTLP_PROTOCOL)',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: str({
    default: '',
    desc: 'headers of every export, `name=value` comma-separated (an API key of a hosted collector)',
  }),
  OTEL_SERVICE_NAME: str({
    default: '',
    desc: 'the service name of the spans; empty: `emapi-api`, `emapi-commands`, `emapi-views`, `emapi-notifications` by process kind',
  }),
  OTEL_RESOURCE_ATTRIBUTES: str({
    default: '',
    desc: 'further resource attributes, `key=value` comma-separated (`deployment.environment=staging`)',
  }),
  OTEL_TRACES_SAMPLER: str({
    default: 'parentbased_always_on',
    choices: SAMPLERS,
    desc: 'which traces are kept; a job’s span follows its request’s decision under the `parentbased_*` samplers',
  }),
  OTEL_TRACES_SAMPLER_ARG: str({
    default: '',
    desc: 'the ratio (0–1) of the `*traceidratio` samplers (default 1)',
  }),
  OTEL_BSP_SCHEDULE_DELAY: nonNegative({ default: 5000, desc: 'ms between two exports of finished spans' }),
  OTEL_SDK_DISABLED: bool({ default: false, desc: '`true` keeps tracing off whatever else is set' }),
};

/** `true` or `false` in any case, around spaces; empty: the default. */
const trueOrFalse = makeValidator<boolean>((raw) => {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw new EnvError('must be true or false');
});

/** Read by an entry point before it loads the configuration: how many copies of itself to run. */
export const ENTRY_POINT_ENVIRONMENT = {
  API_PROCESSES: positive({ default: 1, desc: 'API processes sharing the port under one primary (node:cluster)' }),
  COMMAND_WORKER_PROCESSES: positive({ default: 1, desc: 'command worker processes under one primary' }),
};

/** Read by command worker processes only (infra/config/command-worker-config.ts). */
export const COMMAND_WORKER_ENVIRONMENT = {
  COMMAND_LOCK_DURATION_MS: positive({
    default: undefined,
    desc: 'command workers only: WORKER_LOCK_DURATION_MS for the `commands` queue (default `WORKER_LOCK_DURATION_MS`)',
  }),
  COMMAND_STALLED_INTERVAL_MS: positive({
    default: undefined,
    desc: 'command workers only: WORKER_STALLED_INTERVAL_MS for the `commands` queue (default `WORKER_STALLED_INTERVAL_MS`)',
  }),
  COMMAND_TEST_PAUSE_MS: positive({
    default: undefined,
    desc: 'test only, ignored when NODE_ENV=production: a command worker holds every command this long at COMMAND_TEST_PAUSE_AT, so a test can kill it mid-command',
  }),
  COMMAND_TEST_PAUSE_AT: str({
    default: 'before-commit',
    choices: ['before-commit', 'after-commit'],
    desc: 'test only: where COMMAND_TEST_PAUSE_MS holds a command, `before-commit` or `after-commit` (read only with it)',
  }),
};

/** Read by `node dist/db/cli/seed-demo.js`, which `npm start` runs after the migration. */
export const SEED_ENVIRONMENT = {
  SEED_DEMO: trueOrFalse({
    default: true,
    desc: '`npm start` loads the demo data set (300 schemes and their records) into a database without schemes; `false` skips it',
  }),
};

/** Every declared variable: each group above once, in the order of the documentation's table. */
export const DECLARED = {
  ...ENVIRONMENT,
  ...TRACING_ENVIRONMENT,
  ...ENTRY_POINT_ENVIRONMENT,
  ...COMMAND_WORKER_ENVIRONMENT,
  ...SEED_ENVIRONMENT,
};

/** The group declarations, for a test that no name is declared twice (a spread would hide it). */
export const DECLARATION_GROUPS = [
  ENVIRONMENT,
  TRACING_ENVIRONMENT,
  ENTRY_POINT_ENVIRONMENT,
  COMMAND_WORKER_ENVIRONMENT,
  SEED_ENVIRONMENT,
] as const;

type Declared = typeof DECLARED;
export type Environment = Record<string, string | undefined>;

/** `specs` cleaned out of `env`: every invalid or missing variable named in one ConfigError. */
function clean<S extends Record<string, ValidatorSpec<unknown>>>(env: Environment, specs: S) {
  // Empty strings mean "unset", as a shell's `VAR=` or a compose `${VAR:-}` gives them.
  const given = Object.fromEntries(
    Object.keys(specs)
      .filter((name) => env[name] !== undefined && env[name] !== '')
      .map((name) => [name, env[name]]),
  );
  return cleanEnv(given, specs, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors).map(([name, err]) =>
        err && err.name === 'EnvMissingError'
          ? `${name} is not set`
          : `${name} ${err?.message ?? 'is invalid'}, got '${given[name]}'`,
      );
      if (problems.length) throw new ConfigError(problems.join('; '));
    },
  });
}

/** The cleaned environment every process reads (loadConfig); every invalid or missing variable in one ConfigError. */
export function readEnvironment(env: Environment) {
  return clean(env, ENVIRONMENT);
}

/**
 * The named variables only, cleaned by their declarations: for what a process reads besides (or
 * before) loadConfig. `env` is the process's environment unless a test gives one.
 */
export function readVariables<K extends keyof Declared>(names: readonly K[], env: Environment = process.env) {
  const specs = Object.fromEntries(names.map((name) => [name, DECLARED[name]])) as Pick<Declared, K>;
  return clean(env, specs);
}

function defaultText(spec: ValidatorSpec<unknown>): string {
  if (!('default' in spec)) return 'required';
  if (spec.default === undefined || spec.default === '') return '—';
  return `\`${String(spec.default)}\``;
}

/** The Markdown table of docs/configuration.md, from the declarations above. */
export function environmentTable(): string {
  const rows = Object.entries(DECLARED as Record<string, ValidatorSpec<unknown>>).map(
    ([name, spec]) => `| \`${name}\` | ${defaultText(spec)} | ${spec.desc ?? ''} |`,
  );
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** What a process's tracing is made of, when the environment turns it on. */
export interface TracingSettings {
  serviceName: string;
  protocol: 'http/protobuf' | 'http/json';
  sampler: string;
  samplerRatio: number;
  scheduledDelayMillis: number;
}

/**
 * The tracing settings of a process kind (`component`), or undefined when tracing is off: no
 * endpoint, or OTEL_SDK_DISABLED=true. An invalid value is a ConfigError naming it.
 */
export function readTracingEnvironment(env: Environment, component: string): TracingSettings | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const clean = readVariables(Object.keys(TRACING_ENVIRONMENT) as (keyof typeof TRACING_ENVIRONMENT)[], env);
  if (clean.OTEL_SDK_DISABLED) return undefined;
  const ratio = clean.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(clean.OTEL_TRACES_SAMPLER_ARG);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got '${clean.OTEL_TRACES_SAMPLER_ARG}'`,
    );
  }
  return {
    serviceName: clean.OTEL_SERVICE_NAME || `emapi-${component}`,
    protocol: (clean.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
      clean.OTEL_EXPORTER_OTLP_PROTOCOL) as TracingSettings['protocol'],
    sampler: clean.OTEL_TRACES_SAMPLER,
    samplerRatio: ratio,
    scheduledDelayMillis: clean.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** This process's tracing settings (readTracingEnvironment of its environment). */
export function tracingSettings(component: string): TracingSettings | undefined {
  return readTracingEnvironment(process.env, component);
}
