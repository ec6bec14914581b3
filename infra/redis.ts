import type { ConnectionOptions } from 'bullmq';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisDurability, RedisTarget } from './config/load-config';
import { closeBounded, endNow, type BullConnections } from './stuck-connection';
import { withinTime } from './time-limit';

/**
 * Redis connections for BullMQ (DESIGN §11, §14), the one place that makes them: one server
 * (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES) or a primary found through Redis Sentinel
 * (REDIS_SENTINELS + REDIS_SENTINEL_NAME). Workers and blocking readers must never
 * give up on a command (`maxRetriesPerRequest: null`); the API's producer fails fast when Redis is
 * down (`enableOfflineQueue: false`) so a write answers 503 instead of hanging.
 */
export type RedisRole = 'producer' | 'worker';

/** A connection of either kind: every command the service sends works on both (single-slot keys). */
export type RedisClient = Redis | Cluster;

/**
 * Reconnect soon at first, then every 2 s at most. BullMQ's own default backs off to 20 s, so after
 * a Sentinel failover a worker could sit idle that long, and closing a BullMQ object waits for its
 * connection to be ready again.
 */
function reconnectDelay(times: number): number {
  return Math.min(times * 200, 2000);
}

function roleOptions(role: RedisRole): {
  maxRetriesPerRequest: number | null;
  enableOfflineQueue?: boolean;
  connectTimeout?: number;
  retryStrategy: (times: number) => number;
} {
  return role === 'producer'
    ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, retryStrategy: reconnectDelay }
    : { maxRetriesPerRequest: null, retryStrategy: reconnectDelay };
}

/**
 * A Redis Cluster client. The per-node options are the role's (BullMQ checks the nodes'
 * `maxRetriesPerRequest` of a blocking connection); the cluster's own offline queue follows the
 * role too, so the API's producer fails fast while the cluster has no slot map. The ready check
 * waits for `CLUSTER INFO` to say ok before the first command.
 */
function createCluster(nodes: { host: string; port: number }[], role: RedisRole): Cluster {
  const { enableOfflineQueue, retryStrategy: _perNode, ...redisOptions } = roleOptions(role);
  const options: ClusterOptions = {
    redisOptions,
    enableReadyCheck: true,
    ...(enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
    clusterRetryStrategy: reconnectDelay,
  };
  return new Cluster(nodes, options);
}

/**
 * A connection we own (and must quit). Not auto-pipelined: on the API's producer connection
 * ioredis's enableAutoPipelining cut socket writes but cost more CPU per write than it saved
 * (API 0.57 against 0.49 ms per POST at c=32, five alternating runs; bench/README.md).
 */
export function createRedis(target: RedisTarget, role: RedisRole): RedisClient {
  if ('clusterNodes' in target) return createCluster(target.clusterNodes, role);
  if ('sentinels' in target) return new Redis(sentinelOptions(target, role));
  const options: RedisOptions = roleOptions(role);
  return new Redis(target.url, options);
}

/**
 * A connection to the primary the sentinels name: ioredis asks them for the master group's
 * address on every (re)connect, checks the server's role, and on a failover (the sentinels
 * promote a replica) reconnects to the new primary. The role's options are the same as on one
 * server; keys and prefixes too (one primary holds every key).
 */
function sentinelOptions(
  target: { sentinels: { host: string; port: number }[]; sentinelName: string },
  role: RedisRole,
): { sentinels: { host: string; port: number }[]; name: string } & ReturnType<typeof roleOptions> {
  return {
    sentinels: target.sentinels,
    name: target.sentinelName,
    ...roleOptions(role),
  };
}

/**
 * The key prefix of one queue's BullMQ keys. On one server it is QUEUE_PREFIX, the layout existing
 * deployments have. On a Redis Cluster every multi-key script of BullMQ needs all of a queue's keys
 * in one slot, so the prefix is a hash tag naming the queue, `{QUEUE_PREFIX:queue}`: a queue's keys
 * share a slot, and different queues land on different slots, spread over the primaries.
 */
export function queuePrefix(config: { redis: RedisTarget; queuePrefix: string }, queue: string): string {
  return 'clusterNodes' in config.redis ? `{${config.queuePrefix}:${queue}}` : config.queuePrefix;
}

/** What a BullMQ object built by `withBullConnection` has: its connections and a close that we extend. */
interface BullObject extends BullConnections {
  close(...args: never[]): Promise<void>;
  /** A worker's: whether a job of its own is running (workers/shared/queue-worker.ts). */
  readonly busy?: boolean;
}

/**
 * Builds a BullMQ object (Queue, Worker) on its own connection. On one server or behind Sentinel
 * BullMQ gets connection settings and creates (and closes) its connections itself. BullMQ cannot
 * create a Cluster from settings, so on a cluster it gets a client made here (which it duplicates
 * for its blocking reads) and the object's close quits that client afterwards. Either way its
 * close returns whatever Redis does (infra/stuck-connection.ts: closeBounded).
 */
export function withBullConnection<T extends BullObject>(
  target: RedisTarget,
  role: RedisRole,
  make: (connection: ConnectionOptions) => T,
): T {
  const connection: ConnectionOptions =
    'clusterNodes' in target
      ? createCluster(target.clusterNodes, role)
      : 'sentinels' in target
        ? sentinelOptions(target, role)
        : { url: target.url, ...roleOptions(role) };
  const cluster = connection instanceof Cluster ? connection : undefined;
  // BullMQ reports the connection's errors as the object's own 'error' events; none may go unheard
  // between its close and ours.
  cluster?.on('error', () => undefined);
  const made = make(connection);
  const closable = made as unknown as { close: (...args: unknown[]) => Promise<void> };
  const close = closable.close.bind(made);
  closable.close = (...args: unknown[]) =>
    closeBounded(
      made,
      async () => {
        try {
          await close(...args);
        } finally {
          if (cluster && cluster.status !== 'end') cluster.disconnect();
        }
      },
      () => made.busy ?? false,
    );
  return made;
}

/**
 * How many replicas hold every write this connection has made so far (Redis `WAIT`), or null
 * when none are wanted. Replication is asynchronous: a primary that fails over before its
 * replica received a write loses it, and WAIT is how a writer learns the write survived that.
 */
export async function replicasHolding(client: RedisClient, durability: RedisDurability): Promise<number | null> {
  if (durability.replicas === 0) return null;
  return Number(await client.call('WAIT', durability.replicas, durability.timeoutMs));
}

/** How long a closing process waits for Redis to answer its QUIT before ending the connection. */
const QUIT_WAIT_MS = 2_000;

/**
 * Closes a client at shutdown: QUIT, so commands already sent are answered first, then the
 * client is ended (endNow) if Redis has not answered within QUIT_WAIT_MS. A QUIT waits for Redis
 * without bound: a Cluster node that is down or being reconnected may never answer it, and the
 * process or test stack closing would wait with it.
 */
export async function quitRedis(client: RedisClient): Promise<void> {
  const answered = await withinTime(client.quit(), QUIT_WAIT_MS, 'QUIT').then(
    () => true,
    () => false,
  );
  if (!answered) endNow(client);
}
