import type { Cluster, Redis } from 'ioredis';

/** Either kind of ioredis client (infra/redis.ts). */
type RedisClient = Redis | Cluster;

/**
 * The parts of an ioredis client (a `Redis` or a `Cluster`) that its own close handler uses. Both
 * classes have them; ioredis declares them private.
 */
interface ClosableInternals {
  setStatus(status: 'end'): void;
  flushQueue(error: Error): void;
}

/**
 * Whether `client` is waiting between reconnection attempts: no socket, only a retry timer. A
 * `Cluster` that was asked to disconnect in that state stays `disconnecting` with no node left.
 */
function betweenRetries(client: RedisClient): boolean {
  if (client.status === 'reconnecting') return true;
  return client.status === 'disconnecting' && 'nodes' in client && client.nodes('all').length === 0;
}

/**
 * Ends `client` at once, whatever it waits for: its sockets (a Cluster's, each node's) are
 * destroyed, its status becomes `end` (emitting 'end') and every command still waiting for an
 * answer or a connection is rejected, as ioredis does for a client closed while connected. What
 * `disconnect()` alone leaves waiting: a client between reconnection attempts only loses its retry
 * timer and never emits 'end' (ioredis #1247, #2169); a connected one sends FIN and waits for a
 * peer that may never answer it.
 */
export function endNow(client: RedisClient): void {
  if (client.status === 'end') return;
  const sockets: Redis[] = 'nodes' in client ? client.nodes('all') : [client];
  client.disconnect();
  for (const node of sockets) node.stream?.destroy();
  const internals = client as unknown as ClosableInternals;
  internals.setStatus('end');
  internals.flushQueue(new Error('Connection is closed.'));
}

/**
 * Ends a client that is waiting to reconnect (see endNow): a BullMQ `Worker.close()`, which awaits
 * 'end' on its blocking connection, would otherwise never return (BullMQ #4656). Returns whether
 * it ended the client.
 */
function endIfBetweenRetries(client: RedisClient | undefined): boolean {
  if (!client || !betweenRetries(client)) return false;
  endNow(client);
  return true;
}

/**
 * How long a closing BullMQ object with no job running waits for Redis to say goodbye (answer its
 * QUIT, end its blocking read) before its connections are ended (endNow).
 */
const GOODBYE_MS = 2_000;
/** How often a closing object's connections are looked at. */
const CHECK_MS = 100;

/** A BullMQ object (Queue, Worker, QueueEvents), whose backend holds its connections. */
export interface BullConnections {
  backend: object;
}

/**
 * What BullMQ 6's Redis backend, the one the service uses, holds: its connections, whose clients
 * exist from the object's construction. (`backend.client` is a promise that stays pending until the
 * first ready: a worker whose Redis never answered would have nothing to end.)
 */
interface RedisBackend {
  connection?: BullRedisConnection;
  blockingConnection?: BullRedisConnection;
}

interface BullRedisConnection {
  _client?: unknown;
  /** Stops BullMQ's recovery of a blocking Cluster client from reconnecting it (its close does the same). */
  disableBlockingClusterReconnect?(): void;
}

/**
 * Runs a BullMQ object's `close`, which otherwise can wait for Redis forever: it awaits a QUIT's
 * answer, and its blocking connection's 'end', without bound. While it runs, a blocking
 * connection waiting between reconnection attempts is ended at once, and so is the main one while
 * no job runs; once no job of the object's own has run (`busy`) for GOODBYE_MS, every connection
 * still open is ended too: all the close can wait for then is Redis, and a Redis that stopped
 * answering never will. A job still running is waited for, without bound, as BullMQ does, and its
 * connection is left to record its completion: a worker process exits after its grace anyway
 * (workers/shared/worker-process.ts).
 */
export async function closeBounded(
  object: BullConnections,
  close: () => Promise<void>,
  busy: () => boolean,
): Promise<void> {
  const { connection, blockingConnection } = object.backend as RedisBackend;
  // BullMQ types them as its own client interface; they are the ioredis clients it made or got.
  const main = connection?._client as RedisClient | undefined;
  const blocking = blockingConnection?._client as RedisClient | undefined;
  const endBlocking = () => {
    if (!blocking) return;
    // Else BullMQ's recovery of a Cluster's blocking read reconnects what was just ended.
    blockingConnection?.disableBlockingClusterReconnect?.();
    endNow(blocking);
  };
  let idleSince: number | undefined;
  const check = () => {
    const now = Date.now();
    const running = busy();
    if (running) idleSince = undefined;
    else idleSince ??= now;
    if (idleSince !== undefined && now - idleSince >= GOODBYE_MS) {
      endBlocking();
      if (main) endNow(main);
      return;
    }
    if (blocking && betweenRetries(blocking)) endBlocking();
    if (!running) endIfBetweenRetries(main);
  };
  check();
  const watch = setInterval(check, CHECK_MS);
  try {
    await close();
  } finally {
    clearInterval(watch);
  }
}
