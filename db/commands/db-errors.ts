import type { EntityDefinition } from '../../domain/entities';
import { conflict, validationFailed, type DomainError } from '../../domain/errors/domain-error';
import { alreadyUsedMessage } from './integrity-checks';

/**
 * Postgres errors a command can meet although its checks passed (a race the checks could not see),
 * translated into the same failures the checks give. Anything not listed stays an infrastructure
 * error: the job is retried and, in the end, the client gets a bare 500.
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
  return null;
}
