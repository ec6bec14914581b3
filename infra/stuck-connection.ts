import type { RedisClient } from './redis';

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
 * Ends a client that is waiting to reconnect, as ioredis ends one that is closed while connected:
 * its status becomes `end` (emitting 'end') and the commands queued for the reconnection are
 * rejected. ioredis' `disconnect()` alone, in that state, only cancels the retry timer and never
 * emits 'end' (ioredis #1247, #2169), so a BullMQ `Worker.close()`, which awaits 'end' on its
 * blocking connection, never returns (BullMQ #4656). Returns whether it ended the client.
 */
export function endIfBetweenRetries(client: RedisClient | undefined): boolean {
  if (!client || !betweenRetries(client)) return false;
  client.disconnect();
  const internals = client as unknown as ClosableInternals;
  internals.setStatus('end');
  internals.flushQueue(new Error('Connection is closed.'));
  return true;
}
