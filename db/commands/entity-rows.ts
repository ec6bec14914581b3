import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import { modelFor } from '../models/entity-models';
import { connectionOf, sendStatement, statementsIn } from '../query/prepared-statements';

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

const quoted = (column: string) => `"${column.replace(/"/g, '""')}"`;

/**
 * The columns a locked row is read with: its key and version, every field and relation column and
 * its position among siblings — all a write compares or carries over. Named rather than `*`: the
 * statement runs prepared on the command's connection (a PATCH planned it afresh each time, 0.1 ms
 * of planning in Postgres), and a prepared `select *` would fail once a migration adds a column.
 */
const lockColumns = new Map<string, string>();

function lockColumnsOf(entity: EntityDefinition): string {
  let list = lockColumns.get(entity.name);
  if (list === undefined) {
    const columns = new Set(['id', 'version']);
    for (const field of Object.values(entity.fields)) columns.add(field.column);
    for (const relation of Object.values(entity.relations)) columns.add(relation.column);
    if (entity.keepsWrittenOrder) columns.add('position');
    list = [...columns].map(quoted).join(', ');
    lockColumns.set(entity.name, list);
  }
  return list;
}

export async function lockRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  strength: LockStrength,
): Promise<Row | null> {
  return (await sendLockRow(trx, entity, id, strength)).row;
}

/**
 * lockRow, resolving once the statement is on its way: on the command worker's pipelined
 * connection (db/pipelined-pg.ts) a statement issued next follows it at once, and runs once the
 * lock is granted.
 */
export async function sendLockRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  strength: LockStrength,
): Promise<{ row: Promise<Row | null> }> {
  const lock = strength === 'update' ? 'for update' : 'for no key update';
  const sent = await sendStatement<Row>(
    await connectionOf(trx),
    `select ${lockColumnsOf(entity)} from ${quoted(entity.table)} where id = ? ${lock}`,
    [id],
  );
  return { row: sent.answer.then(({ rows }) => (rows[0] ? plain<Row>(rows[0]) : null)) };
}

/** A value knex builds into the statement itself (`trx.fn.now()`, a raw fragment), not a binding. */
function isBuiltIn(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { toSQL?: unknown }).toSQL === 'function';
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

/**
 * An insert's table, columns and values as statement text (knex `?` placeholders), or null when a
 * value is built into the statement (`trx.fn.now()`), which only the model's insert takes.
 */
export function insertStatementOf(
  entity: EntityDefinition,
  values: Record<string, unknown>,
): { table: string; columns: string; values: string; bindings: Knex.RawBinding[] } | null {
  const columns = Object.keys(values);
  if (columns.some((column) => isBuiltIn(values[column]))) return null;
  return {
    table: quoted(entity.table),
    columns: columns.map(quoted).join(', '),
    values: columns.map(() => '?').join(', '),
    bindings: columns.map((column) => values[column] as Knex.RawBinding),
  };
}

export async function insertRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  values: Record<string, unknown>,
): Promise<{ id: number; version: number }> {
  const insert = insertStatementOf(entity, values);
  if (!insert) {
    const inserted = plain<Row>(await modelFor(entity.name).query(trx).insert(values).returning(['id', 'version']));
    return { id: inserted.id, version: inserted.version };
  }
  // Prepared on the command's connection: its text is the same for every insert of a table.
  const { rows } = await (
    await statementsIn(trx)
  ).raw<{ rows: { id: number; version: number }[] }>(
    `insert into ${insert.table} (${insert.columns}) values (${insert.values}) returning id, version`,
    insert.bindings,
  );
  return { id: rows[0]!.id, version: rows[0]!.version };
}

/** Updates the row (the touch trigger bumps version and updated_at) and returns the new version. */
export async function updateRow(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  values: Record<string, unknown>,
): Promise<number> {
  const columns = Object.keys(values);
  if (columns.some((column) => isBuiltIn(values[column]))) {
    const rows = await trx(entity.table).update(values).where('id', id).returning('version');
    return (rows[0] as { version: number }).version;
  }
  // Prepared like the insert: a PATCH planned this update afresh each time (0.2 ms in Postgres).
  const { rows } = await (
    await statementsIn(trx)
  ).raw<{ rows: { version: number }[] }>(
    `update ${quoted(entity.table)} set ${columns.map((column) => `${quoted(column)} = ?`).join(', ')} where id = ? returning version`,
    [...columns.map((column) => values[column] as Knex.RawBinding), id],
  );
  return rows[0]!.version;
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
