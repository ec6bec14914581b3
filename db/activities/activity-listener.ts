import pg from 'pg';
import { ACTIVITY_CHANNEL } from './activity-log';

/** `application_name` of the LISTEN connection (what pg_stat_activity shows). */
export const LISTEN_APPLICATION_NAME = 'emapi-change-feed';

/** One connection of its own (not from a pool) LISTENing on the activity log's channel. */
export interface ActivityListener {
  /** One round trip on the connection: rejects when it is gone (a silent network shows here). */
  ping(): Promise<void>;
  /** Closes it; `onLost` is not called for that. */
  end(): Promise<void>;
}

export interface ActivityListenerHandlers {
  /** Each committed insert's largest id (NOTIFY is delivered at commit). */
  onNotify(id: number): void;
  /** Once, when the connection drops after it was listening. */
  onLost(err: Error): void;
}

/**
 * Opens a connection to `databaseUrl` and LISTENs on ACTIVITY_CHANNEL (db/activities/activity-log.ts
 * notifies it in every insert's transaction). Rejects when it cannot; the caller retries.
 */
export async function listenForActivities(
  databaseUrl: string,
  handlers: ActivityListenerHandlers,
): Promise<ActivityListener> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: LISTEN_APPLICATION_NAME,
    keepAlive: true,
  });
  let listening = false;
  let done = false;
  const lost = (err: Error) => {
    if (done) return;
    done = true;
    client.end().catch(() => undefined);
    if (listening) handlers.onLost(err);
  };
  client.on('error', lost);
  client.on('end', () => lost(new Error('the LISTEN connection ended')));
  client.on('notification', (message) => {
    const id = Number(message.payload);
    if (Number.isInteger(id)) handlers.onNotify(id);
  });
  try {
    await client.connect();
    await client.query(`listen ${ACTIVITY_CHANNEL}`);
  } catch (err) {
    lost(err as Error);
    throw err;
  }
  listening = true;
  return {
    async ping() {
      await client.query('select 1');
    },
    async end() {
      done = true;
      await client.end().catch(() => undefined);
    },
  };
}
