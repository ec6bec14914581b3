import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import { decodeId } from '../../domain/ids/id-codec';
import type { WriteBody } from '../../domain/validation/write-body';
import { owningParentsOf } from '../../domain/writes/ownership';
import { lockRow, nextPosition, peekColumn, sendLockRow, touchRow, type LockStrength, type Row } from './entity-rows';

/**
 * Rows of owned entities (SchemeCompany, SchemeMarketBoundary, InvestmentCompany) can also be
 * written through their own routes. Such a write locks the owning parent before the child, the
 * same order a write through the parent takes, so the two cannot deadlock; and it moves the
 * parent's version, because the parent's representation (and ETag) includes its children.
 */

export interface OwnerRef {
  parent: EntityDefinition;
  id: number;
}

function ownerKey(owner: OwnerRef): string {
  return `${owner.parent.table}:${owner.id}`;
}

async function lockOwners(trx: Knex.Transaction, owners: readonly OwnerRef[], held: Set<string>): Promise<void> {
  const sorted = [...owners].sort((a, b) => ownerKey(a).localeCompare(ownerKey(b)));
  for (const owner of sorted) {
    if (held.has(ownerKey(owner))) continue;
    await lockRow(trx, owner.parent, owner.id, 'no key update');
    held.add(ownerKey(owner));
  }
}

function ownersOfRow(entity: EntityDefinition, row: Record<string, unknown>): OwnerRef[] {
  return owningParentsOf(entity)
    .filter((link) => typeof row[link.column] === 'number')
    .map((link) => ({ parent: link.parent, id: row[link.column] as number }));
}

export interface LockedRow {
  row: Row;
  owners: OwnerRef[];
  held: Set<string>;
}

/**
 * Locks row `id` for a change, its owners first. Null when the row does not exist. `onLockSent`
 * is called once the row's own lock statement is on its way, so a statement that must read the
 * locked state can follow it without waiting for its answer (a PATCH's document, issue 28).
 */
export async function lockForChange(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  strength: LockStrength,
  onLockSent?: () => void,
): Promise<LockedRow | null> {
  const held = new Set<string>();
  const links = owningParentsOf(entity);
  if (!links.length) {
    const sent = await sendLockRow(trx, entity, id, strength);
    onLockSent?.();
    const row = await sent.row;
    return row ? { row, owners: [], held } : null;
  }
  const peeked: Record<string, unknown> = {};
  for (const link of links) {
    const value = await peekColumn(trx, entity, id, link.column);
    if (value === undefined) return null;
    peeked[link.column] = value;
  }
  await lockOwners(trx, ownersOfRow(entity, peeked), held);
  const row = await lockRow(trx, entity, id, strength);
  if (!row) return null;
  // The row may have moved to another parent between the peek and its lock; it cannot move now.
  const owners = ownersOfRow(entity, row);
  await lockOwners(trx, owners, held);
  // An owned row's statements wait for every lock it takes, as before.
  onLockSent?.();
  return { row, owners, held };
}

export interface NewOwners {
  owners: OwnerRef[];
  /** Service-set columns for the write: the position among the new parent's children. */
  extra: Record<string, unknown>;
}

/**
 * Locks the owners a body names (on create, or when a child moves to another parent) and places
 * the child last among its new siblings. Undecodable or missing owners are left to the relation
 * check, which reports them.
 */
export async function lockOwnersNamedBy(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  body: WriteBody,
  current: LockedRow | null,
): Promise<NewOwners> {
  const held = current?.held ?? new Set<string>();
  const owners: OwnerRef[] = [];
  const extra: Record<string, unknown> = {};
  for (const link of owningParentsOf(entity)) {
    const ref = body[link.relation] as { Id: string } | null;
    const id = ref ? decodeId(link.parent.name, ref.Id) : null;
    if (id === null) continue;
    const owner = { parent: link.parent, id };
    owners.push(owner);
    if (current && current.row[link.column] === id) continue;
    await lockOwners(trx, [owner], held);
    if (entity.keepsWrittenOrder) extra.position = await nextPosition(trx, entity.table, link.column, id);
  }
  return { owners, extra };
}

/** Moves the version of every owner touched by a child's change (each once). */
export async function touchOwners(trx: Knex.Transaction, owners: readonly OwnerRef[]): Promise<void> {
  const seen = new Set<string>();
  for (const owner of owners) {
    if (seen.has(ownerKey(owner))) continue;
    seen.add(ownerKey(owner));
    const exists = await trx(owner.parent.table).where('id', owner.id).first('id');
    if (exists) await touchRow(trx, owner.parent, owner.id);
  }
}
