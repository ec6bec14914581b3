import type { CommandFields, CommandName } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import { keyOf } from '../../domain/entities/entity-key';
import { unsupportedMediaType } from '../../domain/errors/domain-error';
import { parseWriteBody } from '../../domain/validation/write-body';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import { parsePatch, type PatchLimits } from '../../domain/writes/json-patch';

/**
 * A write request to an entity route → the command it becomes: the key, the media type, the body
 * (shape and limits) and `If-Match`, checked in that order. The one builder of a lone POST, PUT,
 * PATCH or DELETE (entity-write.routes.ts) and of the same request inside a `$batch`
 * (api/batch/batch-request-checks.ts): only how the request is read (WriteInput) differs.
 */

export interface WriteLimits {
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
}

/** The body of a request whose media type is not the one its route takes. */
export const WRONG_MEDIA_TYPE = Symbol('wrong media type');

/** A write request as its transport gives it. */
export interface WriteInput {
  /** The key segment of the URL (none on POST, nor on a batch's `$<id>` URL, whose key the worker resolves). */
  key?: string;
  ifMatch?: string;
  /** The body when it has `mediaType` (undefined when there is none), else WRONG_MEDIA_TYPE. */
  body(mediaType: string): unknown;
}

/** What a request is told when its body has another media type than its route takes. */
const VERBS: Record<CommandName, string> = {
  create: 'POST and PUT',
  replace: 'POST and PUT',
  patch: 'PATCH requests',
  delete: 'DELETE requests',
};

/**
 * The command of a write request; `accepts` is its route's (api/routes/route-table.ts). Also the
 * body as received (an `Idempotency-Key` fingerprints it).
 */
export function writeCommandOf(
  entity: EntityDefinition,
  name: CommandName,
  accepts: readonly string[] | undefined,
  input: WriteInput,
  limits: WriteLimits,
): { fields: CommandFields; raw: unknown } {
  const key = input.key === undefined ? undefined : keyOf(entity, input.key);
  const ifMatch = name === 'create' ? undefined : input.ifMatch;
  const fields: CommandFields = {
    name,
    entity: entity.name,
    ...(key === undefined ? {} : { key }),
    ...(ifMatch === undefined ? {} : { ifMatch }),
  };
  if (!accepts) return { fields, raw: undefined };
  const raw = input.body(accepts[0]!);
  if (raw === WRONG_MEDIA_TYPE) throw unsupportedMediaType(`${VERBS[name]} take ${accepts[0]!}.`);
  if (name === 'patch') {
    return { fields: { ...fields, patch: parsePatch(entity, raw, limits.patchLimits, limits.geometryLimits) }, raw };
  }
  return { fields: { ...fields, body: parseWriteBody(entity, raw, limits.geometryLimits, key) }, raw };
}
