/**
 * Whether an error means a store cannot answer now (DESIGN §13: such requests are 503s with
 * Retry-After, never 500s): Postgres unreachable, restarting, out of connections, a connection cut
 * mid-statement, a statement timeout, knex's pool exhausted; Redis unreachable or its command queue
 * given up on.
 */

/** SQLSTATE classes and codes that say "not now", not "wrong". */
const PG_UNAVAILABLE_CLASSES = ['08', '53', '57']; // connection exception, insufficient resources, operator intervention
const PG_UNAVAILABLE_CODES = new Set(['40001', '40P01']); // serialization failure, deadlock: safe to retry

const NODE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const MESSAGES = [
  /Timeout acquiring a connection/i, // knex pool exhausted
  /Connection terminated/i, // pg: socket closed mid-query
  /Client has encountered a connection error/i,
  /Connection is closed/i, // ioredis
  /Reached the max retries per request limit/i, // ioredis MaxRetriesPerRequestError
  /Stream isn't writeable/i, // ioredis with enableOfflineQueue off
  /Cluster isn't ready/i, // ioredis Cluster without a slot map, offline queue off
  /None of startup nodes is available/i, // ioredis Cluster: no seed answers
  /Failed to refresh slots cache/i,
  /^CLUSTERDOWN/, // a Redis Cluster with slots not served
  /getaddrinfo/i,
];

export function isStoreUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth += 1) {
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    if (typeof code === 'string') {
      if (NODE_NETWORK_CODES.has(code) || PG_UNAVAILABLE_CODES.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && PG_UNAVAILABLE_CLASSES.includes(code.slice(0, 2))) return true;
    }
    if (name === 'KnexTimeoutError' || name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && MESSAGES.some((re) => re.test(message))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Seconds a client is asked to wait after a store outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;
