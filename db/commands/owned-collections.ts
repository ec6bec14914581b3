import type { Knex } from 'knex';
import type { OwnedItemType } from '../../domain/writes/ownership';
import {
  planChangesAnything,
  planOwnedCollection,
  type DesiredChild,
  type ExistingChild,
} from '../../domain/writes/owned-collection-plan';

/** The value columns of an owned item (its fields and relations, not its parent key). */
export function itemColumns(item: OwnedItemType): string[] {
  return [
    ...Object.values(item.fields)
      .filter((f) => !f.readOnly)
      .map((f) => f.column),
    ...Object.values(item.relations).map((r) => r.column),
  ];
}

/**
 * Rewrites one owned collection of a parent to the desired items (plan in
 * domain/writes/owned-collection-plan.ts). The parent row is locked by the caller, so the children
 * read here cannot change underneath. `parentIsNew` skips reading children a row just inserted
 * cannot have. Returns whether anything changed.
 */
export async function writeOwnedCollection(
  trx: Knex.Transaction,
  item: OwnedItemType,
  parentId: number,
  desired: readonly DesiredChild[],
  parentIsNew = false,
): Promise<boolean> {
  const columns = itemColumns(item);
  if (parentIsNew && desired.length === 0) return false;
  if (desired.length === 0) {
    // Emptying a collection needs no plan: one statement says whether there was anything.
    const removed = await trx(item.table).where(item.foreignKey, parentId).delete().returning('id');
    return removed.length > 0;
  }
  const rows = parentIsNew
    ? []
    : ((await trx(item.table)
        .select('id', 'position', ...columns)
        .where(item.foreignKey, parentId)
        .orderBy([{ column: 'position' }, { column: 'id' }])) as Record<string, unknown>[]);
  const existing: ExistingChild[] = rows.map((row) => ({
    id: row.id as number,
    position: row.position as number,
    values: Object.fromEntries(columns.map((c) => [c, row[c] ?? null])),
  }));
  const plan = planOwnedCollection(existing, desired);
  if (plan.deletes.length) await trx(item.table).whereIn('id', plan.deletes).delete();
  for (const update of plan.updates) {
    // Entity tables have a trigger for updated_at; owned-record tables are stamped here.
    const stamp = item.isEntity ? {} : { updated_at: trx.fn.now() };
    await trx(item.table)
      .where('id', update.id)
      .update({ ...update.values, position: update.position, ...stamp });
  }
  if (plan.inserts.length) {
    await trx(item.table).insert(
      plan.inserts.map((insert) => ({ ...insert.values, [item.foreignKey]: parentId, position: insert.position })),
    );
  }
  return planChangesAnything(plan);
}
