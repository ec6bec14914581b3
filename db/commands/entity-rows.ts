import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import { modelFor } from '../models/entity-models';

/**
 * Row-level writes of one entity table through its Objection model, always inside the command's
 * transaction. Rows are plain column-keyed records (the models have no name mappers).
 */

export type Row = Record<string, unknown> & { id: number; version: number };

/** `no key update` lets rows that merely reference this one (key share) go on; deletes need `update`. */
export type LockStrength = 'update' | 'no key update';

/** A model instance as a plain record (timestamps become ISO strings; they are never compared). */
function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export async function lockRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  strength: LockStrength,
): Promise<Row | null> {
  const query = modelFor(entity.name).query(trx).findById(id);
  const row = await (strength === 'update' ? query.forUpdate() : query.forNoKeyUpdate());
  return row ? plain<Row>(row) : null;
}

/** The current key of a row's column without locking it (to learn which parent to lock first). */
export async function peekColumn(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  column: string,
): Promise<number | null | undefined> {
  const row = await trx(entity.table).select(column).where('id', id).first();
  return row ? ((row as Record<string, number | null>)[column] ?? null) : undefined;
}

export async function insertRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  values: Record<string, unknown>,
): Promise<{ id: number; version: number }> {
  const inserted = plain<Row>(await modelFor(entity.name).query(trx).insert(values).returning(['id', 'version']));
  return { id: inserted.id, version: inserted.version };
}

/** Updates the row (the touch trigger bumps version and updated_at) and returns the new version. */
export async function updateRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  values: Record<string, unknown>,
): Promise<number> {
  const rows = await trx(entity.table).update(values).where('id', id).returning('version');
  return (rows[0] as { version: number }).version;
}

/**
 * Marks a row changed without changing a column: its owned children changed, so its version (the
 * ETag of everything a keyed GET shows of it) must move too.
 */
export async function touchRow(trx: Knex.Transaction, entity: EntityDefinition, id: number): Promise<number> {
  return updateRow(trx, entity, id, { updated_at: trx.fn.now() });
}

export async function deleteRow(trx: Knex.Transaction, entity: EntityDefinition, id: number): Promise<void> {
  await modelFor(entity.name).query(trx).deleteById(id);
}

/** Next free position among the rows of one parent (rows added through their own route go last). */
export async function nextPosition(
  trx: Knex.Transaction,
  table: string,
  parentColumn: string,
  parentId: number,
): Promise<number> {
  const row = await trx(table).where(parentColumn, parentId).max({ max: 'position' }).first();
  const max = (row as { max: number | null } | undefined)?.max;
  return max === null || max === undefined ? 0 : max + 1;
}
