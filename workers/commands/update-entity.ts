import type { Knex } from 'knex';
import { writeEntity } from '../../db/commands/entity-writer';
import { lockForChange, lockOwnersNamedBy, touchOwners } from '../../db/commands/owner-locks';
import type { WriteBody } from '../../domain/validation/write-body';
import { assertIfMatch, rowNotFound, targetKey, type Applied, type HandlerContext } from './command-handler';

/**
 * The shared path of PUT and PATCH: lock the row (owners first), check `If-Match`, work out the new
 * body from the locked state, write it, and move the owners' versions when anything changed.
 */
export async function updateEntity(
  ctx: HandlerContext,
  bodyFor: (trx: Knex.Transaction) => Promise<WriteBody>,
  touchedCollections?: ReadonlySet<string>,
): Promise<Applied> {
  const { trx, entity } = ctx;
  const key = targetKey(ctx);
  const locked = await lockForChange(trx, entity, key, 'no key update');
  if (!locked) throw rowNotFound(entity, key);
  assertIfMatch(ctx, locked.row);
  const body = await bodyFor(trx);
  const named = await lockOwnersNamedBy(trx, entity, body, locked);
  const written = await writeEntity(trx, entity, body, locked.row, named.extra, touchedCollections);
  if (written.changedFields.length) await touchOwners(trx, [...locked.owners, ...named.owners]);
  return { dbId: key, verb: 'Updated', ...written };
}
