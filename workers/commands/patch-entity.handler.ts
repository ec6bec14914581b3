import { readPatchableDocument } from '../../db/commands/entity-document';
import { parseWriteBody } from '../../domain/validation/write-body';
import { applyPatch } from '../../domain/writes/json-patch';
import { rowNotFound, targetKey, type CommandHandler } from './command-handler';
import { updateEntity } from './update-entity';

/**
 * PATCH: the operations apply, in order, to the entity as a client reads it, read under the row
 * lock; the result is validated as a whole, exactly like a PUT body.
 */
export const patchEntity: CommandHandler = async (ctx) => {
  const { entity, command } = ctx;
  const key = targetKey(ctx);
  return updateEntity(ctx, async (trx) => {
    const document = await readPatchableDocument(trx, entity, key);
    if (!document) throw rowNotFound(entity, key);
    const patched = applyPatch(entity, document, command.patch ?? []);
    return parseWriteBody(entity, patched, key);
  });
};
