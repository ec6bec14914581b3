/**
 * Configuration of every process, read only from the environment (DESIGN §3), through the one
 * declaration of every variable in environment.ts. A pure function of the env object so tests can
 * build configs without touching process.env.
 */
import { ConfigError, readEnvironment, type Environment } from './environment';
import { parseRetrySchedule } from '../../domain/webhooks/retry-schedule';
import type { SubscriptionLimits } from '../../domain/webhooks/subscription';

export type MockRole = 'Admin' | 'User' | 'none';

/**
 * Where the service's Redis is (DESIGN §14): one server by URL, a Redis Cluster by its seed nodes,
 * or a server behind Sentinel. infra/redis.ts turns each into connections and queue prefixes.
 */
export type RedisTarget =
  | { url: string }
  | { clusterNodes: { host: string; port: number }[] }
  | { sentinels: { host: string; port: number }[]; sentinelName: string };

/** `WAIT replicas timeoutMs` after publishing events (replicas 0: no wait). */
export interface RedisDurability {
  replicas: number;
  timeoutMs: number;
}

/**
 * The configuration of every process: what loadConfig makes of the declarations in environment.ts
 * (their types follow the parsers there), so no field is declared a second time by hand.
 */
export type AppConfig = ReturnType<typeof loadConfig>;
export type AuthConfig = AppConfig['auth'];

/** A process whose metrics the API's `/metrics` merges in: its kind (the `process` label) and scrape URL. */
export interface MetricsPeer {
  process: string;
  url: string;
}

/** `POST /$batch` (DESIGN §12, §13): its size, the API's wait, and the budget of its reads. */
export type BatchConfig = AppConfig['batch'];
/** The limits of DESIGN §13: each has an environment variable and answers a 4xx naming it. */
export type LimitsConfig = AppConfig['limits'];
/** Outward webhooks (DESIGN §16). */
export type WebhooksConfig = AppConfig['webhooks'];
/** DESIGN §15: Bull Board's OIDC login (authorization code + PKCE) and its session cookie. */
export type BullBoardLoginConfig = NonNullable<ReturnType<typeof bullBoardLoginOf>>;

export { ConfigError };

/**
 * The API needs a way to authenticate callers; workers do not, so the check is the API's to make
 * (at start, before it listens) rather than every process's.
 */
export function assertAuthConfigured(auth: AuthConfig): void {
  if (auth.mock) return;
  if (!auth.issuerBaseURL && !auth.issuer && !auth.jwksUri && !auth.secret) {
    throw new ConfigError(
      'no authentication configured: set AUTH_ISSUER_BASE_URL, AUTH_ISSUER + AUTH_JWKS_URI or AUTH_SECRET (or AUTH_MOCK=true outside production)',
    );
  }
  if (!auth.audience) throw new ConfigError('AUTH_AUDIENCE is required when authentication is on');
}

export function loadConfig(env: Environment = process.env) {
  const e = readEnvironment(env);
  const production = e.NODE_ENV === 'production';
  const redis = redisTargetOf(e.REDIS_URL, e.REDIS_CLUSTER_NODES, e.REDIS_SENTINELS, e.REDIS_SENTINEL_NAME);
  // Mock authentication is never implied: `npm start` sets AUTH_MOCK=true itself and says so.
  const mock = e.AUTH_MOCK;
  if (e.COMMAND_SIGNING_KEY.length < 32) {
    throw new ConfigError(
      'COMMAND_SIGNING_KEY must be set to at least 32 characters (npm start generates one into .data/)',
    );
  }
  if (mock && production) throw new ConfigError('AUTH_MOCK cannot be on when NODE_ENV=production');
  const optional = (value: string) => value || undefined;
  const bullBoardLogin = bullBoardLoginOf(e, { mock, production });
  return {
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    replicas: {
      urls: e.DATABASE_REPLICA_URLS.split(',').filter((url) => url !== ''),
      waitMs: e.REPLICA_WAIT_MS,
      maxLagMs: e.REPLICA_MAX_LAG_MS,
    },
    redis,
    redisDurability: redisDurabilityOf(redis, e.REDIS_WAIT_REPLICAS, e.REDIS_WAIT_TIMEOUT_MS),
    queuePrefix: e.QUEUE_PREFIX,
    production,
    logLevel: logLevelOf(e),
    accessLog: e.ACCESS_LOG,
    /** CORS_ORIGINS: `*`, or exact origins; empty: CORS off. */
    corsOrigins: e.CORS_ORIGINS === '*' ? ('*' as const) : e.CORS_ORIGINS.split(',').filter((origin) => origin !== ''),
    auth: {
      mock,
      mockRole: e.AUTH_MOCK_ROLE as MockRole,
      issuerBaseURL: optional(e.AUTH_ISSUER_BASE_URL),
      issuer: optional(e.AUTH_ISSUER),
      jwksUri: optional(e.AUTH_JWKS_URI),
      audience: optional(e.AUTH_AUDIENCE),
      secret: optional(e.AUTH_SECRET),
      tokenSigningAlg: e.AUTH_TOKEN_SIGNING_ALG || (e.AUTH_SECRET ? 'HS256' : undefined),
      rolesClaim: e.AUTH_ROLES_CLAIM,
    },
    commandTimeoutMs: e.COMMAND_TIMEOUT_MS,
    maxTop: e.MAX_TOP,
    workerConcurrency: e.WORKER_CONCURRENCY,
    dbPoolMax: e.DB_POOL_MAX,
    /**
     * A command worker gathers committed events this long before publishing them together: one
     * queue round trip and a burst the event workers take in one go, instead of a trickle of single
     * jobs competing with the next request for the CPU. 0 publishes right after each completion.
     */
    eventPublishWindowMs: e.EVENT_PUBLISH_WINDOW_MS,
    /** BullMQ's lock duration and stalled-check interval (its 30 s defaults when unset): the same for every worker of a queue. */
    stalledRecovery: { lockDuration: e.WORKER_LOCK_DURATION_MS, stalledInterval: e.WORKER_STALLED_INTERVAL_MS },
    limits: {
      maxExpandDepth: e.MAX_EXPAND_DEPTH,
      maxExpansions: e.MAX_EXPANSIONS,
      maxExpandTop: e.MAX_EXPAND_TOP,
      maxSyntaxNodes: e.MAX_SYNTAX_NODES,
      maxSkip: e.MAX_SKIP,
      countLimit: e.COUNT_LIMIT,
      searchCountLimit: e.SEARCH_COUNT_LIMIT,
      statementTimeoutMs: e.STATEMENT_TIMEOUT_MS,
      maxResponseBytes: e.MAX_RESPONSE_BYTES,
      maxPatchOperations: e.MAX_PATCH_OPERATIONS,
      maxPatchedDocumentBytes: e.MAX_PATCHED_DOCUMENT_BYTES,
      maxGeometryLength: e.MAX_GEOMETRY_LENGTH,
      maxGeometryVertices: e.MAX_GEOMETRY_VERTICES,
      maxGeometryDepth: e.MAX_GEOMETRY_DEPTH,
      rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
      maxPendingCommandsPerSubject: e.MAX_PENDING_COMMANDS_PER_SUBJECT,
      maxExportsPerSubject: e.MAX_EXPORTS_PER_SUBJECT,
      exportStallMs: e.EXPORT_STALL_MS,
    },
    changes: {
      heartbeatMs: e.CHANGES_HEARTBEAT_MS,
      pollMs: e.CHANGES_POLL_MS,
      maxListeners: e.CHANGES_MAX_LISTENERS,
      maxPerSubject: e.CHANGES_MAX_LISTENERS_PER_SUBJECT,
      maxBufferBytes: e.CHANGES_MAX_BUFFER_BYTES,
      stallMs: e.CHANGES_STALL_MS,
      roleRecheckMs: e.CHANGES_ROLE_RECHECK_MS,
    },
    batch: {
      maxRequests: e.BATCH_MAX_REQUESTS,
      maxBytes: e.BATCH_MAX_BYTES,
      timeoutMs: e.BATCH_TIMEOUT_MS,
      maxReadRows: e.BATCH_MAX_READ_ROWS,
      readTimeoutMs: e.BATCH_READ_TIMEOUT_MS,
      groupReadTimeoutMs: e.BATCH_GROUP_READ_TIMEOUT_MS,
    },
    /** 127.0.0.1 whenever mock authentication is on (DESIGN §13). */
    listenHost: e.LISTEN_HOST || (mock ? '127.0.0.1' : '0.0.0.0'),
    bullBoardReadOnly: e.BULL_BOARD_READ_ONLY,
    /** The OIDC login in front of Bull Board; absent: bearer tokens only. */
    ...(bullBoardLogin ? { bullBoardLogin } : {}),
    commandSigningKey: e.COMMAND_SIGNING_KEY,
    metrics: { enabled: e.METRICS_ENABLED, port: e.METRICS_PORT, peers: metricsPeersOf(e.METRICS_PEERS) },
    retention: {
      outboxMs: Math.round(e.OUTBOX_RETENTION_HOURS * 3600_000),
      commandLogMs: Math.round(e.COMMAND_LOG_RETENTION_HOURS * 3600_000),
      deliveriesMs: Math.round(e.WEBHOOK_DELIVERY_RETENTION_HOURS * 3600_000),
      intervalMs: e.RETENTION_INTERVAL_MS,
    },
    webhooks: {
      allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      /** In ms: a delivery has `length + 1` attempts. */
      retrySchedule: parseRetrySchedule(e.WEBHOOK_RETRY_SCHEDULE),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      concurrencyPerSubscription: e.WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION,
      // The slow lane leaves a slot to the healthy subscriptions whenever there are two or more.
      slowLaneConcurrency: Math.max(1, Math.min(e.WEBHOOK_SLOW_LANE_CONCURRENCY, e.WEBHOOK_CONCURRENCY - 1)),
      maxSubscriptions: e.WEBHOOK_MAX_SUBSCRIPTIONS,
      limits: {
        maxUrlLength: e.WEBHOOK_MAX_URL_LENGTH,
        maxEventPatterns: e.WEBHOOK_MAX_EVENT_PATTERNS,
        maxDescriptionLength: e.WEBHOOK_MAX_DESCRIPTION_LENGTH,
      } satisfies SubscriptionLimits,
    },
  };
}

/** kind=url items, already validated. */
function metricsPeersOf(items: string): MetricsPeer[] {
  if (items === '') return [];
  return items.split(',').map((item) => {
    const equals = item.indexOf('=');
    return { process: item.slice(0, equals), url: item.slice(equals + 1) };
  });
}

/** LOG_LEVEL, else `warn` under NODE_ENV=test and `info` otherwise. */
export function logLevelOf(e: { LOG_LEVEL: string; NODE_ENV: string }): string {
  return e.LOG_LEVEL || (e.NODE_ENV === 'test' ? 'warn' : 'info');
}

/** host:port items, already validated. */
function hostPortsOf(items: string): { host: string; port: number }[] {
  return items.split(',').map((item) => {
    const colon = item.lastIndexOf(':');
    return { host: item.slice(0, colon), port: Number(item.slice(colon + 1)) };
  });
}

/** Exactly one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (the latter with its master name). */
function redisTargetOf(url: string, clusterNodes: string, sentinels: string, sentinelName: string): RedisTarget {
  if ([url, clusterNodes, sentinels].filter((value) => value !== '').length !== 1) {
    throw new ConfigError(
      'set exactly one of REDIS_URL (one Redis), REDIS_CLUSTER_NODES (a Redis Cluster) and REDIS_SENTINELS (Redis behind Sentinel)',
    );
  }
  if (sentinels === '' && sentinelName !== '') {
    throw new ConfigError('REDIS_SENTINEL_NAME is only read with REDIS_SENTINELS');
  }
  if (url !== '') return { url };
  if (clusterNodes !== '') return { clusterNodes: hostPortsOf(clusterNodes) };
  if (sentinelName.trim() === '') {
    throw new ConfigError('REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the master group name the sentinels monitor');
  }
  return { sentinels: hostPortsOf(sentinels), sentinelName: sentinelName.trim() };
}

/**
 * REDIS_WAIT_REPLICAS: by default a replica must hold published events only behind Sentinel, the
 * target that fails over to a replica. A Cluster's WAIT would have to reach the node holding each
 * queue, which a cluster client cannot aim at: refused there.
 */
function redisDurabilityOf(redis: RedisTarget, replicas: string, timeoutMs: number): RedisDurability {
  const wanted = replicas === '' ? ('sentinels' in redis ? 1 : 0) : Number(replicas);
  if (wanted > 0 && 'clusterNodes' in redis) {
    throw new ConfigError('REDIS_WAIT_REPLICAS is not supported with REDIS_CLUSTER_NODES; leave it empty or 0');
  }
  return { replicas: wanted, timeoutMs };
}

const LOGIN_SETTINGS = [
  'BULL_BOARD_OIDC_CLIENT_ID',
  'BULL_BOARD_OIDC_CLIENT_SECRET',
  'BULL_BOARD_PUBLIC_URL',
  'BULL_BOARD_SESSION_SECRET',
] as const;

/**
 * The Bull Board login: on when BULL_BOARD_OIDC_ISSUER is set, and then complete or refused at
 * start (a session cookie without its secret, or a redirect URI nobody can reach, is no login).
 */
function bullBoardLoginOf(e: ReturnType<typeof readEnvironment>, mode: { mock: boolean; production: boolean }) {
  if (!e.BULL_BOARD_OIDC_ISSUER) {
    const stray = LOGIN_SETTINGS.filter((name) => e[name]);
    if (stray.length) throw new ConfigError(`${stray.join(', ')} need BULL_BOARD_OIDC_ISSUER (the Bull Board login)`);
    return undefined;
  }
  if (mode.mock) {
    throw new ConfigError(
      'BULL_BOARD_OIDC_ISSUER cannot be combined with AUTH_MOCK: mock authentication needs no login',
    );
  }
  const issuer = httpUrl(e.BULL_BOARD_OIDC_ISSUER, 'BULL_BOARD_OIDC_ISSUER');
  if (mode.production && issuer.protocol !== 'https:') {
    throw new ConfigError('BULL_BOARD_OIDC_ISSUER must be https when NODE_ENV=production');
  }
  if (!e.BULL_BOARD_OIDC_CLIENT_ID)
    throw new ConfigError('BULL_BOARD_OIDC_CLIENT_ID is required with the Bull Board login');
  if (!e.BULL_BOARD_PUBLIC_URL) {
    throw new ConfigError(
      'BULL_BOARD_PUBLIC_URL is required with the Bull Board login: the origin browsers reach the API at (the redirect URI is built from it)',
    );
  }
  const publicUrl = httpUrl(e.BULL_BOARD_PUBLIC_URL, 'BULL_BOARD_PUBLIC_URL');
  if (publicUrl.origin !== e.BULL_BOARD_PUBLIC_URL.replace(/\/$/, '')) {
    throw new ConfigError(
      `BULL_BOARD_PUBLIC_URL must be an origin like https://api.example.com (no path), got '${e.BULL_BOARD_PUBLIC_URL}'`,
    );
  }
  if (e.BULL_BOARD_SESSION_SECRET.length < 32) {
    throw new ConfigError(
      'BULL_BOARD_SESSION_SECRET must be set to at least 32 characters with the Bull Board login (every API process shares it)',
    );
  }
  return {
    issuer: e.BULL_BOARD_OIDC_ISSUER,
    clientId: e.BULL_BOARD_OIDC_CLIENT_ID,
    ...(e.BULL_BOARD_OIDC_CLIENT_SECRET ? { clientSecret: e.BULL_BOARD_OIDC_CLIENT_SECRET } : {}),
    scopes: e.BULL_BOARD_OIDC_SCOPES,
    publicUrl: publicUrl.origin,
    sessionSecret: e.BULL_BOARD_SESSION_SECRET,
    sessionTtlSeconds: e.BULL_BOARD_SESSION_TTL_MINUTES * 60,
  };
}

function httpUrl(raw: string, name: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol)) throw new ConfigError(`${name} must be an http(s) URL, got '${raw}'`);
  return url;
}
