import type { Knex } from 'knex';

/**
 * A transaction's last write, sent without waiting for its answer (issue 28). On the command
 * worker's pipelined connection (db/pipelined-pg.ts) the command's record and COMMIT then follow it
 * at once: a lone PATCH waits for Postgres one time fewer. If the write fails, the transaction is
 * failed, the statements behind it fail too, and Postgres answers the COMMIT by rolling back; its
 * own error is then the one to report, so the unit of work reads these answers first, once the
 * transaction is over (workers/commands/unit-of-work.ts).
 *
 * Only a transaction whose owner reads them allows it (allowDeferredWrites); anywhere else a write
 * waits for its answer as before.
 */

const deferred = new WeakMap<Knex.Transaction, Promise<unknown>[]>();

/** `trx`'s owner will read the deferred answers (settleDeferredWrites) before anything else of it. */
export function allowDeferredWrites(trx: Knex.Transaction): void {
  deferred.set(trx, []);
}

/** Whether a write on `trx` may leave its answer for later. */
export function mayDefer(trx: Knex.Transaction): boolean {
  return deferred.has(trx);
}

/** Keeps `answer` for settleDeferredWrites; until then its failure is nobody's (no unhandled rejection). */
export function deferAnswer(trx: Knex.Transaction, answer: Promise<unknown>): void {
  const answers = deferred.get(trx);
  if (!answers) throw new Error('a write was deferred on a transaction that does not allow it');
  answer.catch(() => undefined);
  answers.push(answer);
}

/** Waits for every deferred answer of `trx`, in order; throws the first failure. */
export async function settleDeferredWrites(trx: Knex.Transaction): Promise<void> {
  const answers = deferred.get(trx) ?? [];
  deferred.delete(trx);
  for (const answer of answers) await answer;
}
