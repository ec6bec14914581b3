import { writeEntity } from '../../db/commands/entity-writer';
import { lockOwnersNamedBy, touchOwners } from '../../db/commands/owner-locks';
import { parseWriteBody } from '../../domain/validation/write-body';
import type { CommandHandler } from './command-handler';

/** POST: validate the body again (the queue is a trust boundary too), insert, touch any owner. */
export const createEntity: CommandHandler = async (ctx) => {
  const { trx, command, entity } = ctx;
  const body = parseWriteBody(entity, command.body, ctx.geometryLimits);
  const owners = await lockOwnersNamedBy(trx, entity, body, null);
  const written = await writeEntity(trx, entity, body, null, owners.extra);
  await touchOwners(trx, owners.owners);
  return { dbId: written.id, verb: 'Created', ...written };
};
