/**
 * How an owned collection is rewritten (DESIGN §4, §10): an item carrying the Id of an existing
 * child of the same parent updates that child in place (the first such item; a repeat, e.g. from a
 * JSON Patch `copy`, is a new child); every other item is inserted; children not listed are
 * deleted. `position` records the written order. Values are keyed by column.
 */

export type ColumnValues = Record<string, unknown>;

export interface ExistingChild {
  id: number;
  position: number;
  values: ColumnValues;
}

export interface DesiredChild {
  /** The key the item's Id decodes to, when it carried one. */
  id: number | null;
  values: ColumnValues;
}

export interface CollectionPlan {
  inserts: { position: number; values: ColumnValues }[];
  /** Only children whose values or position differ. */
  updates: { id: number; position: number; values: ColumnValues }[];
  deletes: number[];
}

export function sameValues(a: ColumnValues, b: ColumnValues): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if ((a[key] ?? null) !== (b[key] ?? null)) return false;
  return true;
}

export function planOwnedCollection(
  existing: readonly ExistingChild[],
  desired: readonly DesiredChild[],
): CollectionPlan {
  const byId = new Map(existing.map((child) => [child.id, child]));
  const kept = new Set<number>();
  const plan: CollectionPlan = { inserts: [], updates: [], deletes: [] };
  desired.forEach((item, position) => {
    const current = item.id === null ? undefined : byId.get(item.id);
    if (!current || kept.has(current.id)) {
      plan.inserts.push({ position, values: item.values });
      return;
    }
    kept.add(current.id);
    if (current.position !== position || !sameValues(current.values, item.values)) {
      plan.updates.push({ id: current.id, position, values: item.values });
    }
  });
  plan.deletes = existing.filter((child) => !kept.has(child.id)).map((child) => child.id);
  return plan;
}

export function planChangesAnything(plan: CollectionPlan): boolean {
  return plan.inserts.length > 0 || plan.updates.length > 0 || plan.deletes.length > 0;
}
