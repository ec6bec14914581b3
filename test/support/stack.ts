import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import type { DestinationStream } from 'pino';
import { createApiRuntime } from '../../api/api-runtime';
import { answerClientErrors } from '../../api/http/client-errors';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { loadConfig, type AppConfig, type RedisTarget } from '../../infra/config/load-config';
import { startRedisCluster, type RedisCluster } from './redis-cluster';
import { createLogger } from '../../infra/logger';
import { createTestDatabase, uniqueQueuePrefix, type TestDatabase } from './test-database';
import { startViewsWorker } from '../../workers/views/views-worker';
import { startNotificationsWorker } from '../../workers/notifications/notifications-worker';
import { checkContract, odataModelFor } from './contract';

/**
 * The real stack for a test file: its own database (cloned from the migrated template), its own
 * queue prefix on the test Redis, the API listening on a free port and, unless told otherwise, the
 * worker processes' loops running in this process. Nothing is mocked.
 */

export interface Closeable {
  close(): Promise<void>;
}

/** Starts one worker kind in-process for the given config. */
export type WorkerStarter = (config: AppConfig) => Promise<Closeable>;

export interface StackOptions {
  /** Extra environment for the config (AUTH_*, COMMAND_TIMEOUT_MS, MAX_TOP, …). */
  env?: Record<string, string>;
  /** More environment that needs the API's own origin (`http://127.0.0.1:<port>`), known once it listens. */
  envFor?: (baseUrl: string) => Record<string, string>;
  /** Worker kinds to run in-process; defaults to every kind (see defaultWorkers). */
  workers?: WorkerStarter[];
  /** How the service reaches its database, given the test database's URL (e.g. through a proxy). */
  databaseUrl?: (direct: string) => string;
  /** Hot standbys the API reads from (DATABASE_REPLICA_URLS), given the test database's URL. */
  replicaUrls?: (direct: string) => string[];
  /** Where the API's log lines go (stdout otherwise), to read them; LOG_LEVEL in `env` sets the level. */
  logDestination?: DestinationStream;
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, when the body is JSON. */
  body: unknown;
}

export interface Stack {
  baseUrl: string;
  config: AppConfig;
  /** Direct database access, for arranging rows and checking what was persisted. */
  knex: Knex;
  /** The test database's own URL, whatever route the service takes to it. */
  directDatabaseUrl: string;
  request(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string>; raw?: string },
  ): Promise<HttpResult>;
  get(path: string, headers?: Record<string, string>): Promise<HttpResult>;
  close(): Promise<void>;
}

/** Worker kinds started by default: the real worker loops, in this process. */
export const defaultWorkers: WorkerStarter[] = [
  function startCommandWorkerOf(config) {
    return startCommandWorker(config);
  },
  startViewsWorker,
  startNotificationsWorker,
];

const REAL_AUTH = ['AUTH_ISSUER_BASE_URL', 'AUTH_ISSUER', 'AUTH_JWKS_URI', 'AUTH_SECRET'];

/**
 * The environment of a worker process a test spawns against `stack`: its stores, its queue prefix
 * and its signing key, plus `extra` (log level, stalled-recovery settings, …).
 */
export function workerProcessEnv(stack: Stack, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    DATABASE_URL: stack.config.databaseUrl,
    ...redisEnv(stack.config.redis),
    QUEUE_PREFIX: stack.config.queuePrefix,
    COMMAND_SIGNING_KEY: stack.config.commandSigningKey,
    ...extra,
  };
}

/** The settings naming `target`, for a process started on the same Redis (one server, a cluster, Sentinel). */
function redisEnv(target: RedisTarget): Record<string, string> {
  const list = (items: { host: string; port: number }[]) => items.map(({ host, port }) => `${host}:${port}`).join(',');
  if ('url' in target) return { REDIS_URL: target.url };
  if ('sentinels' in target) {
    return { REDIS_SENTINELS: list(target.sentinels), REDIS_SENTINEL_NAME: target.sentinelName };
  }
  return { REDIS_CLUSTER_NODES: list(target.clusterNodes) };
}

/** The key `npm test` exports, so processes the tests spawn verify what the in-process API signs. */
export function testSigningKey(): string {
  const key = process.env.COMMAND_SIGNING_KEY;
  if (!key) throw new Error('COMMAND_SIGNING_KEY is not set: run the suite with `npm test`');
  return key;
}

/**
 * TEST_ON_REDIS_CLUSTER=1 runs every stack of a test file on a Redis Cluster (DESIGN §14) instead of
 * the suite's Redis: one three-node cluster per file (test/support/redis-cluster.ts), started by its
 * first stack and stopped when its last stack closes.
 */
const fileCluster = (() => {
  let cluster: Promise<RedisCluster> | undefined;
  let users = 0;
  return {
    async acquire(): Promise<string> {
      users += 1;
      cluster ??= startRedisCluster();
      return (await cluster).seeds;
    },
    async release(): Promise<void> {
      users -= 1;
      if (users > 0 || !cluster) return;
      const stopping = cluster;
      cluster = undefined;
      await (await stopping).stop();
    },
  };
})();

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const db: TestDatabase = await createTestDatabase();
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl) throw new Error('REDIS_URL is not set: run the suite with `npm test`');
  const onCluster = !options.env?.REDIS_CLUSTER_NODES && process.env.TEST_ON_REDIS_CLUSTER === '1';
  const clusterNodes = options.env?.REDIS_CLUSTER_NODES ?? (onCluster ? await fileCluster.acquire() : undefined);
  // Listening first, so settings that name the API's own origin can be given to its config.
  const server: Server = createServer();
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = { ...options.env, ...options.envFor?.(baseUrl) };
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: options.databaseUrl ? options.databaseUrl(db.url) : db.url,
    // On a Redis Cluster REDIS_CLUSTER_NODES, behind Sentinel REDIS_SENTINELS instead (exactly one).
    ...(clusterNodes
      ? { REDIS_URL: '', REDIS_CLUSTER_NODES: clusterNodes }
      : options.env?.REDIS_SENTINELS
        ? { REDIS_URL: '' }
        : { REDIS_URL: redisUrl }),
    QUEUE_PREFIX: uniqueQueuePrefix(),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    DB_POOL_MAX: '5',
    COMMAND_SIGNING_KEY: testSigningKey(),
    ...(options.replicaUrls ? { DATABASE_REPLICA_URLS: options.replicaUrls(db.url).join(',') } : {}),
    // Mock authentication is explicit now; a file that passes real auth settings turns it off.
    AUTH_MOCK: REAL_AUTH.some((name) => env[name]) ? 'false' : 'true',
    ...env,
  });
  const logger = createLogger('api-test', config.logLevel, options.logDestination);
  const runtime = await createApiRuntime(config, logger);
  const { app, knex } = runtime;
  server.on('request', app);
  const workers: { name: string; running: Closeable }[] = [];
  for (const [index, start] of (options.workers ?? defaultWorkers).entries())
    workers.push({ name: start.name || `worker ${index}`, running: await start(config) });

  async function request(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ) {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    // Every response the suite receives must be what /openapi.json says (DESIGN §15), or under
    // /odata what the service's `$metadata` says (DESIGN §17).
    const odataModel = await odataModelFor(baseUrl, path);
    checkContract({ method, path, status: res.status, headers: res.headers, text, requestBody: body, odataModel });
    let parsed: unknown;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  return {
    baseUrl,
    config,
    knex,
    directDatabaseUrl: db.url,
    request,
    get: (path, headers) => request('GET', path, { headers }),
    async close() {
      await Promise.allSettled(workers.map((w) => namedIfSlow(`the workers (${w.name})`, w.running.close())));
      // Open GET /Changes streams would hold the server open: ended first, as api-process.ts does.
      await namedIfSlow('the /Changes streams', runtime.endStreams());
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await namedIfSlow('the HTTP server', closed);
      await namedIfSlow('the API runtime', runtime.close());
      await db.drop();
      if (onCluster) await fileCluster.release();
    },
  };
}

/**
 * A step of a stack's close, named on stderr every 20 s it runs on: a close that hangs shows up in
 * ava only as "Failed to exit" for the whole file, without saying what it waits on.
 */
async function namedIfSlow<T>(what: string, step: Promise<T>): Promise<T> {
  const started = Date.now();
  const timer = setInterval(
    () =>
      process.stderr.write(
        `[stack.close] ${what}: still closing after ${Math.round((Date.now() - started) / 1000)} s\n`,
      ),
    20_000,
  );
  timer.unref();
  try {
    return await step;
  } finally {
    clearInterval(timer);
  }
}
