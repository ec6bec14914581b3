import type { Knex } from 'knex';
import { unavailable } from '../../domain/errors/domain-error';

/** Postgres `query_canceled`: here, the statement ran past its `statement_timeout`. */
const QUERY_CANCELED = '57014';

/** Seconds a client is asked to wait after a read ran out of time. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Runs a read in a read-only transaction whose statements Postgres stops after `timeoutMs`
 * (STATEMENT_TIMEOUT_MS, DESIGN §13), so no query can hold a connection and a CPU for long. A
 * statement stopped that way answers 503 with Retry-After. Exports do not come through here.
 */
export async function withReadTimeout<T>(
  knex: Knex,
  timeoutMs: number,
  read: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  try {
    return await knex.transaction(
      async (trx) => {
        // SET LOCAL ends with the transaction, so the pooled connection keeps its own setting.
        await trx.raw(`set local statement_timeout = ${Math.floor(timeoutMs)}`);
        return read(trx);
      },
      { readOnly: true },
    );
  } catch (err) {
    if ((err as { code?: string } | null)?.code === QUERY_CANCELED) {
      throw unavailable(
        `the read took longer than ${timeoutMs} ms (STATEMENT_TIMEOUT_MS); narrow it with $filter, $top or $expand, or try again later`,
        RETRY_AFTER_SECONDS,
      );
    }
    throw err;
  }
}
