import { Worker } from 'bullmq';
import { endIfBetweenRetries } from '../../infra/stuck-connection';
import type { RedisClient } from '../../infra/redis';

/** How often a closing worker looks for a connection stuck between reconnection attempts. */
const STUCK_CHECK_MS = 100;

/**
 * A BullMQ Worker whose close() returns while Redis is unreachable. A graceful close waits for the
 * active jobs and then for its blocking connection's 'end', which a connection waiting to
 * reconnect never emits (infra/stuck-connection.ts): the close, and the process or test stack
 * waiting on it, would hang. While it closes, such a connection is ended instead. Jobs still
 * running then cannot record their completion; their locks lapse and they run again as stalled,
 * as after a crash (the command log keeps a command exactly-once, DESIGN §6).
 */
export class QueueWorker extends Worker {
  override async close(force = false): Promise<void> {
    const check = () => void this.endStuckConnections();
    check();
    const watch = setInterval(check, STUCK_CHECK_MS);
    try {
      await super.close(force);
    } finally {
      clearInterval(watch);
    }
  }

  private async endStuckConnections(): Promise<void> {
    const clients = await Promise.all([this.backend.client, this.backend.blockingClient]);
    // BullMQ types them as its own client interface; they are the ioredis instances it made.
    for (const client of clients) endIfBetweenRetries(client as unknown as RedisClient | undefined);
  }
}
