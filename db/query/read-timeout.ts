import type { Knex } from 'knex';
import type pg from 'pg';
import { badRequest, unavailable } from '../../domain/errors/domain-error';
import { statementsOn } from './prepared-statements';

/** Postgres `query_canceled`: here, the statement ran past its `statement_timeout`. */
const QUERY_CANCELED = '57014';
/** Postgres `program_limit_exceeded`: e.g. a JSON text past 1 GB, long before MAX_RESPONSE_BYTES is checked. */
const PROGRAM_LIMIT_EXCEEDED = '54000';

/** Seconds a client is asked to wait after a read ran out of time. */
const RETRY_AFTER_SECONDS = 5;

/** What the read queries need of a connection: `raw` statements (a Knex, a transaction, or one connection). */
export type ReadDb = Pick<Knex, 'raw'>;

/**
 * The `statement_timeout` each pooled connection carries, as set by `withReadTimeout`. Setting it
 * once per connection (not per read, in a transaction with SET LOCAL) keeps a keyed read at one
 * round trip; a connection taken for something that must not time out is exempted first.
 */
const timeoutOf = new WeakMap<object, number>();

/**
 * Runs a read on one pooled connection whose statements Postgres stops after `timeoutMs`
 * (STATEMENT_TIMEOUT_MS, DESIGN §13), so no query can hold a connection and a CPU for long. A
 * statement stopped that way answers 503 with Retry-After; one that hit a Postgres size limit while
 * building the JSON answers 400 like MAX_RESPONSE_BYTES. Exports do not come through here.
 */
export async function withReadTimeout<T>(knex: Knex, timeoutMs: number, read: (db: ReadDb) => Promise<T>): Promise<T> {
  const connection = (await knex.client.acquireConnection()) as object;
  try {
    if (timeoutOf.get(connection) !== timeoutMs) {
      // The setting is an integer from the configuration, never client text.
      await knex.raw(`set statement_timeout = ${Math.floor(timeoutMs)}`).connection(connection);
      timeoutOf.set(connection, timeoutMs);
    }
    // Straight to the pg connection, so statements whose text repeats run prepared.
    return await read(statementsOn(connection as pg.ClientBase));
  } catch (err) {
    throw readFailure(err, timeoutMs);
  } finally {
    await knex.client.releaseConnection(connection);
  }
}

/** A read's failure as the client should see it: 503 past the time limit, 400 past a size limit. */
function readFailure(err: unknown, timeoutMs: number): unknown {
  const code = (err as { code?: string } | null)?.code;
  if (code === QUERY_CANCELED) {
    return unavailable(
      `the read took longer than ${timeoutMs} ms (STATEMENT_TIMEOUT_MS); narrow it with $filter, $top or $expand, or try again later`,
      RETRY_AFTER_SECONDS,
    );
  }
  if (code === PROGRAM_LIMIT_EXCEEDED) {
    return badRequest(
      'the response is too large to build (MAX_RESPONSE_BYTES): ask for fewer rows with $top or fewer expansions with $expand',
    );
  }
  return err;
}

/**
 * A read inside a write transaction (a GET in a `$batch` atomicity group, which must see the
 * group's writes), held to the same `timeoutMs` for as long as it runs; the transaction's own
 * statements keep the setting they had.
 */
export async function withTransactionReadTimeout<T>(
  trx: Knex.Transaction,
  timeoutMs: number,
  read: (db: ReadDb) => Promise<T>,
): Promise<T> {
  // The setting is an integer from the configuration, never client text.
  await trx.raw(`set local statement_timeout = ${Math.floor(timeoutMs)}`);
  let result: T;
  try {
    result = await read(trx);
  } catch (err) {
    throw readFailure(err, timeoutMs); // the transaction is aborted: nothing more runs on it
  }
  await trx.raw('set local statement_timeout to default');
  return result;
}

/**
 * Lifts the read timeout from a connection taken straight from the pool for work that may run
 * long (exports stream for as long as their client reads). Returns the statement to run first on
 * it, or null when the connection carries no timeout.
 */
export function exemptFromReadTimeout(connection: object): string | null {
  if (!timeoutOf.has(connection)) return null;
  timeoutOf.delete(connection);
  return 'set statement_timeout = 0';
}
