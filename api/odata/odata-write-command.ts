import { keyOf } from '../../domain/entities/entity-key';
import { unsupportedMediaType, validationFailed } from '../../domain/errors/domain-error';
import { WRONG_MEDIA_TYPE, writeCommandOf, type WriteInput } from '../entities/write-command';
import { mergeOperationsOf, rootBodyOf } from './odata-write-body';

/**
 * A write request under `/odata` (DESIGN §17) → the command the same change at the root becomes
 * (api/entities/write-command.ts): the key, the media type, the body, `If-Match`, checked in the
 * root's order. POST and PUT bodies are read into the root's write form (odata-write-body.ts); a
 * PATCH object becomes the JSON Patch operations of the same change, so the worker runs the root's
 * `patch` command with the root's limits. The one builder of a lone `/odata` write
 * (odata-write.routes.ts) and of the same request inside an `/odata` batch: only how the request is
 * read (WriteInput) differs. Same signature as the root's `writeCommandOf`.
 */
export const odataWriteCommandOf: typeof writeCommandOf = (entity, name, accepts, input, limits) => {
  let raw: unknown;
  // The root's builder, given the body in the root's form: one place checks keys, bodies and limits.
  const rootInput: WriteInput = {
    ...input,
    body(mediaType) {
      raw = input.body(mediaType);
      if (raw === WRONG_MEDIA_TYPE) throw unsupportedMediaType(`Writes under /odata take ${mediaType}.`);
      if (name !== 'patch') return rootBodyOf(entity, raw);
      if (raw === undefined) throw validationFailed([`${entity.name}: a PATCH needs a JSON object`]);
      // A key-less PATCH (a batch's `$<id>` URL) has no key to compare an `Id` with: it is left out.
      return mergeOperationsOf(entity, raw, input.key === undefined ? undefined : keyOf(entity, input.key));
    },
  };
  return { fields: writeCommandOf(entity, name, accepts, rootInput, limits).fields, raw };
};
