import type { Knex } from 'knex';
import type { EntityDefinition, RelationField, ScalarField } from '../../domain/entities';
import { decodeId } from '../../domain/ids/id-codec';
import type { WriteBody, WriteItem } from '../../domain/validation/write-body';
import { changedFields } from '../../domain/writes/changed-fields';
import { sameValues, type ColumnValues } from '../../domain/writes/owned-collection-plan';
import { ownedCollectionsOf } from '../../domain/writes/ownership';
import { insertRow, insertStatementOf, touchRow, updateRow, type Row } from './entity-rows';
import {
  assertUniqueValues,
  decodeRelations,
  insertWithRelations,
  resolveRelations,
  type RelationRef,
} from './integrity-checks';
import { writeOwnedCollection } from './owned-collections';

/**
 * Persists a canonical write body (domain/validation/write-body.ts) as a new row or over an
 * existing, locked one: related entities checked, unique values checked, the row written, owned
 * collections rewritten, and the changed members worked out for the domain event.
 */

export interface WrittenEntity {
  id: number;
  version: number;
  changedFields: string[];
  /** Keys of the row's single relations after the write (for the domain event). */
  references: Record<string, number | null>;
}

/** The keys a row's single relations hold, by relation name. */
export function referencesOf(entity: EntityDefinition, row: Record<string, unknown>): Record<string, number | null> {
  return Object.fromEntries(
    Object.entries(entity.relations).map(([name, relation]) => [name, (row[relation.column] as number | null) ?? null]),
  );
}

type Ref = { Id: string } | null;

function refsOf(
  relations: Record<string, RelationField>,
  values: Record<string, unknown>,
  path: string,
  current?: Row | null,
): RelationRef[] {
  const refs: RelationRef[] = [];
  for (const [name, relation] of Object.entries(relations)) {
    const ref = values[name] as Ref;
    if (!ref) continue;
    const held = current ? ((current[relation.column] as number | null) ?? null) : undefined;
    refs.push({ path: `${path}.${name}`, target: relation.target, encodedId: ref.Id, current: held });
  }
  return refs;
}

/** The relations a write sets; those of owned collections it leaves alone are not looked at. */
export function relationRefsOf(
  entity: EntityDefinition,
  body: WriteBody,
  existing: Row | null,
  collections?: ReadonlySet<string>,
): RelationRef[] {
  const refs = refsOf(entity.relations, body, '', existing);
  for (const owned of ownedCollectionsOf(entity)) {
    if (collections && !collections.has(owned.name)) continue;
    (body[owned.name] as WriteItem[]).forEach((item, i) => {
      refs.push(...refsOf(owned.item.relations, item, `.${owned.name}[${i}]`));
    });
  }
  return refs;
}

export function columnsOf(
  fields: Record<string, ScalarField>,
  relations: Record<string, RelationField>,
  values: Record<string, unknown>,
  keys: Map<string, number>,
  path: string,
): ColumnValues {
  const out: ColumnValues = {};
  for (const [name, field] of Object.entries(fields)) {
    if (!field.readOnly) out[field.column] = values[name] ?? null;
  }
  for (const [name, relation] of Object.entries(relations)) {
    out[relation.column] = values[name] ? keys.get(`${path}.${name}`)! : null;
  }
  return out;
}

/** Whether any of these fields holds values unique across its table (checked before a write). */
export function hasUniqueFields(fields: Record<string, ScalarField>): boolean {
  return Object.values(fields).some((field) => field.unique);
}

function pick(row: Row, columns: string[]): ColumnValues {
  return Object.fromEntries(columns.map((c) => [c, row[c] ?? null]));
}

/**
 * Writes `body` as a new row (`existing` null) or over `existing`, which the caller has locked.
 * `extra` holds service-set columns (a position among siblings). An unchanged row is not updated,
 * so its version only moves when something a client can read moved. `collections`, when given,
 * names the only owned collections that may have changed (a PATCH touching none skips them all).
 */
export async function writeEntity(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  body: WriteBody,
  existing: Row | null,
  extra: ColumnValues = {},
  collections?: ReadonlySet<string>,
): Promise<WrittenEntity> {
  const refs = relationRefsOf(entity, body, existing, collections);
  const decoded = decodeRelations(refs);
  const values = { ...columnsOf(entity.fields, entity.relations, body, decoded.keys, ''), ...extra };
  // A new row naming existing ones, with no unique value to check first: check and insert at once.
  const insert =
    !existing && decoded.complete && decoded.wanted.size > 0 && !hasUniqueFields(entity.fields)
      ? insertStatementOf(entity, values)
      : null;
  let created: { id: number; version: number } | null = null;
  if (insert) created = await insertWithRelations(trx, entity.name, refs, decoded, insert);
  else {
    await resolveRelations(trx, entity.name, refs, decoded);
    await assertUniqueValues(trx, entity, values, existing?.id ?? null);
    if (!existing) created = await insertRow(trx, entity, values);
  }

  const before = existing ? pick(existing, Object.keys(values)) : null;
  const id = existing?.id ?? created!.id;

  const changedCollections: string[] = [];
  for (const owned of ownedCollectionsOf(entity)) {
    if (collections && !collections.has(owned.name)) continue;
    const desired = (body[owned.name] as WriteItem[]).map((item, i) => ({
      id: typeof item.Id === 'string' ? decodeId(owned.item.name, item.Id) : null,
      values: columnsOf(owned.item.fields, owned.item.relations, item, decoded.keys, `.${owned.name}[${i}]`),
    }));
    if (await writeOwnedCollection(trx, owned.item, id, desired, !existing)) changedCollections.push(owned.name);
  }

  let version = created?.version ?? existing!.version;
  if (before && !sameValues(before, values)) version = await updateRow(trx, entity, id, values);
  else if (before && changedCollections.length) version = await touchRow(trx, entity, id);
  return {
    id,
    version,
    changedFields: changedFields(entity, before, values, changedCollections),
    references: referencesOf(entity, values),
  };
}
