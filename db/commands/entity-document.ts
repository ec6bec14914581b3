import type { Knex } from 'knex';
import type { EntityDefinition } from '../../domain/entities';
import type { ExpandItem } from '../../domain/odata';
import { ownedCollectionsOf } from '../../domain/writes/ownership';
import { readEntity } from '../query/entity-reader';
import { statementsIn } from '../query/prepared-statements';

/**
 * The document a JSON Patch applies to: the entity exactly as a keyed GET shows it, plus every owned
 * collection (`/Companies/0/PercentageShare` must resolve although Companies is an `$expand` target).
 * Read in a statement of its own after the row lock: folded into the locking statement, the owned
 * collections would come from the snapshot taken before waiting for the lock (READ COMMITTED
 * re-reads only the locked row), and concurrent appends would be lost (writes-concurrency test).
 */
export async function readPatchableDocument(
  trx: Knex.Transaction,
  entity: EntityDefinition,
  id: number,
  /**
   * The members the operations name (paths and `from`s); the owned collections outside it are not
   * read (they are neither changed nor written back). Undefined reads them all.
   */
  members?: ReadonlySet<string>,
): Promise<Record<string, unknown> | null> {
  const expand: ExpandItem[] = ownedCollectionsOf(entity)
    .filter((owned) => !owned.collection.alwaysPopulated && (!members || members.has(owned.name)))
    .map((owned) => ({ path: [owned.name], options: {}, span: { start: 0, end: 0 } }));
  const row = await readEntity(await statementsIn(trx), entity, id, expand);
  return row ? (JSON.parse(row.json) as Record<string, unknown>) : null;
}
