import type { Knex } from 'knex';
import { writeEntity } from '../../db/commands/entity-writer';
import { lockForChange, lockOwnersNamedBy, touchOwners } from '../../db/commands/owner-locks';
import type { WriteBody } from '../../domain/validation/write-body';
import { assertIfMatch, rowNotFound, targetKey, type Applied, type HandlerContext } from './command-handler';

/**
 * The shared path of PUT and PATCH: lock the row (owners first), check `If-Match`, work out the new
 * body from the locked state, write it, and move the owners' versions when anything changed.
 * `readAhead`, when given, is what `bodyFor` reads of the locked state: it is issued as soon as the
 * lock is on its way, so its statement follows the lock's without a round trip of its own (issue 28),
 * and runs, as before, once the lock is granted.
 */
export async function updateEntity<Ahead>(
  ctx: HandlerContext,
  bodyFor: (trx: Knex.Transaction, ahead: Promise<Ahead>) => Promise<WriteBody>,
  touchedCollections?: ReadonlySet<string>,
  readAhead?: (trx: Knex.Transaction) => Promise<Ahead>,
): Promise<Applied> {
  const { trx, entity } = ctx;
  const key = targetKey(ctx);
  let ahead = Promise.resolve(undefined) as Promise<Ahead>;
  const locked = await lockForChange(trx, entity, key, 'no key update', () => {
    if (!readAhead) return;
    ahead = readAhead(trx);
    // Awaited by bodyFor; a failure before then (404, 412, the lock's own error) leaves it unread.
    ahead.catch(() => undefined);
  });
  if (!locked) throw rowNotFound(entity, key);
  assertIfMatch(ctx, locked.row);
  const body = await bodyFor(trx, ahead);
  const named = await lockOwnersNamedBy(trx, entity, body, locked);
  const written = await writeEntity(trx, entity, body, locked.row, named.extra, touchedCollections);
  if (written.changedFields.length) await touchOwners(trx, [...locked.owners, ...named.owners]);
  return { dbId: key, verb: 'Updated', ...written };
}
