import type { EntityDefinition } from '../../domain/entities';
import { conflict, validationFailed, type DomainError } from '../../domain/errors/domain-error';
import { alreadyUsedMessage } from './integrity-checks';

/**
 * Postgres errors a command can meet although its checks passed (a race the checks could not see,
 * a value the column cannot hold), translated into the same failures the checks give: never a
 * 5xx for input (DESIGN §13). Anything not listed is an infrastructure error: the job is retried
 * and, in the end, the client gets a 503 it may repeat.
 */

interface PgError {
  code?: string;
  constraint?: string;
  /** e.g. `Key (iso_code)=(GB) already exists.` */
  detail?: string;
}

/** Deadlock, serialization failure, lock timeout: run the whole command again. */
const RETRYABLE = new Set(['40P01', '40001', '55P03']);

export function isRetryableDbError(err: unknown): boolean {
  return RETRYABLE.has((err as PgError)?.code ?? '');
}

/**
 * What an infrastructure error may say outside the worker's log (a failed job's reason, shown by
 * /Jobs and Bull Board): its SQLSTATE or error code, never the statement or the values in it.
 */
export function publicReasonOf(err: unknown): string {
  const code = (err as PgError)?.code;
  return `the command was not applied: ${code ? `database or network error ${code}` : 'internal error'} (details in the worker log)`;
}

export function translateDbError(err: unknown, entity: EntityDefinition): DomainError | null {
  const { code, constraint, detail } = (err ?? {}) as PgError;
  if (!code) return null;
  if (code === '23505') {
    // knex names unique constraints `<table>_<column>_unique`.
    const field = Object.entries(entity.fields).find(([, f]) => constraint === `${entity.table}_${f.column}_unique`);
    const value = /^Key \([^)]*\)=\((.*)\) already exists\.$/.exec(detail ?? '')?.[1];
    if (field && value !== undefined) return conflict([alreadyUsedMessage(entity, field[0], value)]);
    return conflict([`${entity.name}: a unique value is already used`]);
  }
  if (code === '23503') {
    // Either a referenced row vanished or a delete met a new referrer; both are conflicts with other writes.
    return conflict([`${entity.name}: a related entity was changed by another request; retry`]);
  }
  // Class 22 (data exception): a value the schema let through that the column cannot hold.
  if (code.startsWith('22')) return validationFailed([`${entity.name}: a value cannot be stored`]);
  // Not-null and check violations: a rule of the table the definitions did not state.
  if (code === '23502' || code === '23514')
    return validationFailed([`${entity.name}: a value breaks a rule of the table`]);
  // Program limit exceeded (e.g. a value too large for an index entry).
  if (code === '54000') return validationFailed([`${entity.name}: a value is too large to store`]);
  return null;
}
