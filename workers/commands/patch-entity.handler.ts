import { readPatchableDocument } from '../../db/commands/entity-document';
import { parseWriteBody } from '../../domain/validation/write-body';
import { applyPatch } from '../../domain/writes/json-patch';
import type { PatchOperation } from '../../domain/commands/command';
import { rowNotFound, targetKey, type CommandHandler } from './command-handler';
import { updateEntity } from './update-entity';

/**
 * PATCH: the operations apply, in order, to the entity as a client reads it, read under the row
 * lock (its statement follows the lock's on the wire); the result is validated as a whole, exactly
 * like a PUT body.
 */
export const patchEntity: CommandHandler = async (ctx) => {
  const { entity, command } = ctx;
  const key = targetKey(ctx);
  const operations = command.patch ?? [];
  return updateEntity(
    ctx,
    async (_trx, read) => {
      const document = await read;
      if (!document) throw rowNotFound(entity, key);
      const patched = applyPatch(entity, document, operations, ctx.patchLimits);
      return parseWriteBody(entity, patched, ctx.geometryLimits, key);
    },
    topLevelMembers(operations, 'changed'),
    (trx) => readPatchableDocument(trx, entity, key, topLevelMembers(operations, 'read')),
  );
};

/**
 * Members the operations can change (`/Notes/-` → Notes; a `move` changes its `from` too), so the
 * owned collections no operation touches are not rewritten, or that they read (a `copy`'s `from`
 * too), so the others are not read; undefined when the whole document is concerned (path '').
 */
function topLevelMembers(
  operations: readonly PatchOperation[],
  which: 'changed' | 'read',
): ReadonlySet<string> | undefined {
  const members = new Set<string>();
  for (const op of operations) {
    const withFrom = op.op === 'move' || (which === 'read' && op.op === 'copy');
    const pointers = withFrom ? [op.path, op.from] : [op.path];
    for (const pointer of pointers) {
      if (typeof pointer !== 'string') continue;
      if (pointer === '') return undefined;
      // The first reference token of a JSON pointer, unescaped (RFC 6901).
      members.add((pointer.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~'));
    }
  }
  return members;
}
