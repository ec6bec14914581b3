import { deleteRow } from '../../db/commands/entity-rows';
import { referencesOf } from '../../db/commands/entity-writer';
import { assertNotReferenced } from '../../db/commands/integrity-checks';
import { lockForChange, touchOwners } from '../../db/commands/owner-locks';
import { assertIfMatch, rowNotFound, targetKey, type CommandHandler } from './command-handler';

/**
 * DELETE: owned children go with the row (cascading foreign keys); any other referrer blocks it
 * with a 409 naming them. The `update` lock makes new referrers wait until this commits.
 */
export const deleteEntity: CommandHandler = async (ctx) => {
  const { trx, entity } = ctx;
  const key = targetKey(ctx);
  const locked = await lockForChange(trx, entity, key, 'update');
  if (!locked) throw rowNotFound(entity, key);
  assertIfMatch(ctx, locked.row);
  await assertNotReferenced(trx, entity, key);
  await deleteRow(trx, entity, key);
  await touchOwners(trx, locked.owners);
  return { dbId: key, version: 0, verb: 'Deleted', changedFields: [], references: referencesOf(entity, locked.row) };
};
