import type { EntityDefinition } from '../entities';
import type { ColumnValues } from './owned-collection-plan';

/**
 * The API member names a write changed, in definition order, for the domain event (the activity
 * log's ChangedFields). `before` is null on create: then every member written with a value counts.
 */
export function changedFields(
  entity: EntityDefinition,
  before: ColumnValues | null,
  after: ColumnValues,
  changedCollections: readonly string[],
): string[] {
  const differs = (column: string) => (before?.[column] ?? null) !== (after[column] ?? null);
  const out: string[] = [];
  for (const [name, field] of Object.entries(entity.fields)) {
    if (!field.readOnly && differs(field.column)) out.push(name);
  }
  for (const [name, relation] of Object.entries(entity.relations)) {
    if (differs(relation.column)) out.push(name);
  }
  for (const name of Object.keys(entity.collections)) {
    if (changedCollections.includes(name)) out.push(name);
  }
  return out;
}
