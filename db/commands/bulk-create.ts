import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import { decodeId } from '../../domain/ids/id-codec';
import type { WriteBody, WriteItem } from '../../domain/validation/write-body';
import { changedFields } from '../../domain/writes/changed-fields';
import { ownedCollectionsOf, owningParentsOf } from '../../domain/writes/ownership';
import { columnsOf, hasUniqueFields, referencesOf, relationRefsOf, type WrittenEntity } from './entity-writer';
import { resolveRelations, type RelationRef } from './integrity-checks';

/**
 * Creates many entities at once, one statement per table (DESIGN §12: an atomicity group of a
 * `$batch` made only of POSTs). Keys are taken from the tables' sequences first, so a request can
 * name an entity created earlier in the same group before anything is inserted; the relations to
 * rows that already exist are checked and locked `for key share` in one statement; the tables are
 * then filled parents first, owned collections last. It answers what `writeEntity` answers for each.
 *
 * It does not say which request broke a rule: a failure here rolls the group back, and the caller
 * applies it again request by request, which names the request and its problem exactly.
 */

export interface BulkCreate {
  entity: EntityDefinition;
  body: WriteBody;
  /** The key taken for it by `takeKeys`. */
  id: number;
}

/** Bound parameters per statement: Postgres allows 65,535. */
const MAX_PARAMETERS = 30_000;

/**
 * Whether creates of `entity` can go set-based: no owning parent to lock and place it under, no
 * unique value to check against the others (owned items included).
 */
export function bulkCreatable(entity: EntityDefinition): boolean {
  return (
    owningParentsOf(entity).length === 0 &&
    !hasUniqueFields(entity.fields) &&
    ownedCollectionsOf(entity).every((owned) => !hasUniqueFields(owned.item.fields))
  );
}

/** Takes `count` keys from each entity's sequence, in ascending order (one statement). */
export async function takeKeys(
  trx: Knex.Transaction,
  counts: ReadonlyMap<EntityDefinition, number>,
): Promise<Map<string, number[]>> {
  const entities = [...counts.keys()];
  const selects = entities.map(
    (entity, i) =>
      `select ${i} as t, nextval(pg_get_serial_sequence('${entity.table}', 'id'))::int as id from generate_series(1, ?)`,
  );
  const result = await trx.raw<{ rows: { t: number; id: number }[] }>(
    selects.join(' union all '),
    entities.map((entity) => counts.get(entity)!),
  );
  const keys = new Map<string, number[]>(entities.map((entity) => [entity.name, []]));
  for (const row of result.rows) keys.get(entities[row.t]!.name)!.push(row.id);
  for (const list of keys.values()) list.sort((a, b) => a - b);
  return keys;
}

/** Entity tables parents first: a table comes after every table of the run its relations point at. */
function insertOrder(creates: readonly BulkCreate[]): EntityDefinition[] | null {
  const entities = [...new Map(creates.map((c) => [c.entity.name, c.entity])).values()];
  const names = new Set(entities.map((e) => e.name));
  const targetsOf = (entity: EntityDefinition) => [
    ...Object.values(entity.relations).map((r) => r.target),
    ...ownedCollectionsOf(entity).flatMap((owned) => Object.values(owned.item.relations).map((r) => r.target)),
  ];
  const ordered: EntityDefinition[] = [];
  const placed = new Set<string>();
  while (ordered.length < entities.length) {
    const next = entities.find(
      (e) => !placed.has(e.name) && targetsOf(e).every((t) => !names.has(t) || placed.has(t) || t === e.name),
    );
    if (!next) return null; // a cycle between the run's types: the caller goes request by request
    ordered.push(next);
    placed.add(next.name);
  }
  return ordered;
}

async function insertRows(trx: Knex.Transaction, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const perRow = Object.keys(rows[0]!).length;
  const chunk = Math.max(1, Math.floor(MAX_PARAMETERS / perRow));
  for (let start = 0; start < rows.length; start += chunk) {
    await trx(table).insert(rows.slice(start, start + chunk));
  }
}

/**
 * Inserts every create (keys already taken). Throws a DomainError when a related row is missing or
 * a body names an entity of the run that references its own type (order unknown): null instead
 * when the run cannot go set-based at all.
 */
export async function createAll(
  trx: Knex.Transaction,
  creates: readonly BulkCreate[],
): Promise<WrittenEntity[] | null> {
  const order = insertOrder(creates);
  if (!order) return null;
  const taken = new Set(creates.map((c) => `${c.entity.name}:${c.id}`));
  const refsOf = creates.map((c, i) =>
    relationRefsOf(c.entity, c.body, null).map((ref): RelationRef => ({ ...ref, path: `#${i}${ref.path}` })),
  );
  // Rows created in this run need no check: they are inserted before anything pointing at them.
  const toCheck = refsOf.flat().filter((ref) => {
    const id = decodeId(ref.target, ref.encodedId);
    return id === null || !taken.has(`${ref.target}:${id}`);
  });
  await resolveRelations(trx, '$batch', toCheck);

  const values = creates.map((c, i) => {
    const keys = new Map(
      refsOf[i]!.map((ref) => [ref.path.slice(`#${i}`.length), decodeId(ref.target, ref.encodedId)!]),
    );
    return { id: c.id, ...columnsOf(c.entity.fields, c.entity.relations, c.body, keys, '') };
  });
  const children = new Map<string, Record<string, unknown>[]>();
  const changedCollections = creates.map((c, i) => {
    const keys = new Map(
      refsOf[i]!.map((ref) => [ref.path.slice(`#${i}`.length), decodeId(ref.target, ref.encodedId)!]),
    );
    const changed: string[] = [];
    for (const owned of ownedCollectionsOf(c.entity)) {
      const items = c.body[owned.name] as WriteItem[];
      if (items.length === 0) continue;
      changed.push(owned.name);
      if (!children.has(owned.item.table)) children.set(owned.item.table, []);
      items.forEach((item, position) => {
        children.get(owned.item.table)!.push({
          ...columnsOf(owned.item.fields, owned.item.relations, item, keys, `.${owned.name}[${position}]`),
          [owned.item.foreignKey]: c.id,
          position,
        });
      });
    }
    return changed;
  });

  for (const entity of order) {
    await insertRows(
      trx,
      entity.table,
      values.filter((_, i) => creates[i]!.entity === entity),
    );
  }
  for (const [table, rows] of children) await insertRows(trx, table, rows);

  return creates.map((c, i) => {
    const { id: _id, ...columns } = values[i]!;
    return {
      id: c.id,
      version: 1,
      changedFields: changedFields(c.entity, null, columns, changedCollections[i]!),
      references: referencesOf(c.entity, columns),
    };
  });
}
