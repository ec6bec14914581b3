import { parseWriteBody } from '../../domain/validation/write-body';
import { targetKey, type CommandHandler } from './command-handler';
import { updateEntity } from './update-entity';

/** PUT: the body replaces every writable member; omitted ones took their defaults in the API. */
export const replaceEntity: CommandHandler = async (ctx) => {
  const body = parseWriteBody(ctx.entity, ctx.command.body, ctx.geometryLimits, targetKey(ctx));
  return updateEntity(ctx, async () => body);
};
