/**
 * Configuration of every process, read only from the environment (DESIGN §3). A pure function of
 * the env object so tests can build configs without touching process.env.
 */

export type MockRole = 'Admin' | 'User' | 'none';

export interface AuthConfig {
  mock: boolean;
  mockRole: MockRole;
  issuerBaseURL?: string;
  issuer?: string;
  jwksUri?: string;
  audience?: string;
  secret?: string;
  tokenSigningAlg?: string;
  rolesClaim: string;
}

export interface AppConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  /** Prefix of every BullMQ key: lets several deployments (or test files) share one Redis. */
  queuePrefix: string;
  production: boolean;
  logLevel: string;
  auth: AuthConfig;
  commandTimeoutMs: number;
  maxTop: number;
  /** Jobs one worker process runs at once. */
  workerConcurrency: number;
  dbPoolMax: number;
  /**
   * How long a command worker gathers committed events before publishing them together: one queue
   * round trip and a burst the event workers take in one go, instead of a trickle of single jobs
   * competing with the next request for the CPU. 0 publishes right after each completion.
   */
  eventPublishWindowMs: number;
  /**
   * How soon a job of a dead worker process runs again (BullMQ's lock duration and stalled-check
   * interval; its 30 s defaults when unset). Every worker of a queue should use the same values.
   */
  stalledRecovery: { lockDuration?: number; stalledInterval?: number };
  limits: LimitsConfig;
  /** Interface the API listens on: 127.0.0.1 whenever mock authentication is on (DESIGN §13). */
  listenHost: string;
  /** Bull Board shows queues but refuses job actions unless BULL_BOARD_READ_ONLY=false. */
  bullBoardReadOnly: boolean;
  /** HMAC key over every command payload; workers refuse a command whose signature fails. */
  commandSigningKey: string;
  /** How long published outbox rows and finished command-log rows are kept (the idempotency window). */
  retention: { outboxMs: number; commandLogMs: number; intervalMs: number };
}

/** The limits of DESIGN §13: each has an environment variable and answers a 4xx naming it. */
export interface LimitsConfig {
  maxExpandDepth: number;
  maxExpansions: number;
  maxExpandTop: number;
  maxSyntaxNodes: number;
  maxSkip: number;
  statementTimeoutMs: number;
  maxResponseBytes: number;
  maxPatchOperations: number;
  maxPatchedDocumentBytes: number;
  /** Requests per subject per minute; 0 turns the limiter off. */
  rateLimitPerMinute: number;
  maxPendingCommandsPerSubject: number;
  maxExportsPerSubject: number;
  exportStallMs: number;
}

export class ConfigError extends Error {}

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

function int(env: Record<string, string | undefined>, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer ≥ ${min}, got '${raw}'`);
  return n;
}

/** A duration given in hours (fractions allowed: 0.01 h = 36 s, for benchmarks and tests), in ms. */
function hours(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback * 3600_000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a positive number of hours, got '${raw}'`);
  return Math.round(n * 3600_000);
}

function optionalInt(env: Record<string, string | undefined>, name: string): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : int(env, name, 0);
}

function bool(env: Record<string, string | undefined>, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const production = env.NODE_ENV === 'production';
  const databaseUrl = env.DATABASE_URL;
  const redisUrl = env.REDIS_URL;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL is not set');
  if (!redisUrl) throw new ConfigError('REDIS_URL is not set');

  // Mock authentication is never implied: `npm start` sets AUTH_MOCK=true itself and says so.
  const mock = bool(env, 'AUTH_MOCK') ?? false;
  const commandSigningKey = env.COMMAND_SIGNING_KEY ?? '';
  if (commandSigningKey.length < 32) {
    throw new ConfigError(
      'COMMAND_SIGNING_KEY must be set to at least 32 characters (npm start generates one into .data/)',
    );
  }
  if (mock && production) throw new ConfigError('AUTH_MOCK cannot be on when NODE_ENV=production');
  const mockRole = (env.AUTH_MOCK_ROLE || 'Admin') as MockRole;
  if (!['Admin', 'User', 'none'].includes(mockRole)) {
    throw new ConfigError(`AUTH_MOCK_ROLE must be Admin, User or none, got '${env.AUTH_MOCK_ROLE}'`);
  }
  return {
    port: int(env, 'PORT', 3000, 0),
    databaseUrl,
    redisUrl,
    queuePrefix: env.QUEUE_PREFIX || 'emapi',
    production,
    logLevel: env.LOG_LEVEL || (env.NODE_ENV === 'test' ? 'warn' : 'info'),
    auth: {
      mock,
      mockRole,
      issuerBaseURL: env.AUTH_ISSUER_BASE_URL || undefined,
      issuer: env.AUTH_ISSUER || undefined,
      jwksUri: env.AUTH_JWKS_URI || undefined,
      audience: env.AUTH_AUDIENCE || undefined,
      secret: env.AUTH_SECRET || undefined,
      tokenSigningAlg: env.AUTH_TOKEN_SIGNING_ALG || (env.AUTH_SECRET ? 'HS256' : undefined),
      rolesClaim: env.AUTH_ROLES_CLAIM || 'roles',
    },
    commandTimeoutMs: int(env, 'COMMAND_TIMEOUT_MS', 10000),
    maxTop: int(env, 'MAX_TOP', 1000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 16),
    dbPoolMax: int(env, 'DB_POOL_MAX', 20),
    eventPublishWindowMs: int(env, 'EVENT_PUBLISH_WINDOW_MS', 25, 0),
    stalledRecovery: {
      lockDuration: optionalInt(env, 'WORKER_LOCK_DURATION_MS'),
      stalledInterval: optionalInt(env, 'WORKER_STALLED_INTERVAL_MS'),
    },
    limits: {
      maxExpandDepth: int(env, 'MAX_EXPAND_DEPTH', 3),
      maxExpansions: int(env, 'MAX_EXPANSIONS', 10),
      maxExpandTop: int(env, 'MAX_EXPAND_TOP', 100),
      maxSyntaxNodes: int(env, 'MAX_SYNTAX_NODES', 100),
      maxSkip: int(env, 'MAX_SKIP', 100_000, 0),
      statementTimeoutMs: int(env, 'STATEMENT_TIMEOUT_MS', 10_000),
      maxResponseBytes: int(env, 'MAX_RESPONSE_BYTES', 32 * 1024 * 1024),
      maxPatchOperations: int(env, 'MAX_PATCH_OPERATIONS', 100),
      maxPatchedDocumentBytes: int(env, 'MAX_PATCHED_DOCUMENT_BYTES', 1024 * 1024),
      rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 0, 0),
      maxPendingCommandsPerSubject: int(env, 'MAX_PENDING_COMMANDS_PER_SUBJECT', 200),
      maxExportsPerSubject: int(env, 'MAX_EXPORTS_PER_SUBJECT', 2),
      exportStallMs: int(env, 'EXPORT_STALL_MS', 60_000),
    },
    listenHost: env.LISTEN_HOST || (mock ? '127.0.0.1' : '0.0.0.0'),
    bullBoardReadOnly: bool(env, 'BULL_BOARD_READ_ONLY') ?? true,
    commandSigningKey,
    retention: {
      outboxMs: hours(env, 'OUTBOX_RETENTION_HOURS', 24),
      commandLogMs: hours(env, 'COMMAND_LOG_RETENTION_HOURS', 7 * 24),
      // How often the one retention job (a BullMQ job scheduler shared by every process) runs.
      intervalMs: int(env, 'RETENTION_INTERVAL_MS', 60_000),
    },
  };
}
