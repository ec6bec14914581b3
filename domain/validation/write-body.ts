import type { EntityDefinition, RelationField, ScalarField } from '../entities';
import { validationFailed } from '../errors/domain-error';
import { parseKey } from '../ids/id-codec';
import { ownedCollectionsOf, type OwnedItemType } from '../writes/ownership';
import { validationMessages } from './error-messages';
import { geometryLimitErrors, type GeometryLimits } from '../writes/geometry-limits';
import { assertStorableJson } from '../json/storable-json';
import { writeValidatorOf } from './write-schemas';

/**
 * A write body in canonical form: every writable member present, in API member names. Scalars are
 * values or null, relations `{ Id }` or null, owned collections arrays of items (an item keeps
 * `Id` only when the client gave one). Omitted members took their defaults (null, empty), which is
 * what PUT means (spec §4 note 2); POST starts from the same defaults.
 */
export type WriteBody = Record<string, unknown>;
export type WriteItem = Record<string, unknown>;

/**
 * Validates a POST/PUT body or a patched document against the entity's schema; throws a 400.
 * Geometry is held to its limits first, so the schema's WKT check only ever reads bounded text.
 */
export function assertValidBody(
  entity: EntityDefinition,
  raw: unknown,
  geometryLimits: GeometryLimits,
): asserts raw is Record<string, unknown> {
  assertStorableJson(entity.name, raw);
  const tooLarge = geometryLimitErrors(entity, raw, geometryLimits);
  if (tooLarge.length) throw validationFailed(tooLarge);
  const validate = writeValidatorOf(entity);
  if (!validate(raw)) throw validationFailed(validationMessages(entity.name, validate.errors ?? []));
}

/** On PUT (and a patched document) an `Id` must name the row of the URL (DESIGN §4). */
export function assertIdMatchesKey(entity: EntityDefinition, raw: Record<string, unknown>, key: number): void {
  const id = raw.Id;
  if (id === undefined || id === null) return;
  const matches = typeof id === 'string' && parseKey(entity.name, id, entity.acceptsBareIntegerKeys) === key;
  if (!matches) throw validationFailed([`${entity.name}.Id: does not match the key in the URL`]);
}

function scalarsOf(fields: Record<string, ScalarField>, raw: Record<string, unknown>, out: Record<string, unknown>) {
  for (const [name, field] of Object.entries(fields)) {
    if (!field.readOnly) out[name] = raw[name] ?? null;
  }
}

function relationsOf(
  relations: Record<string, RelationField>,
  raw: Record<string, unknown>,
  out: Record<string, unknown>,
) {
  for (const name of Object.keys(relations)) {
    const ref = raw[name] as { Id: string } | null | undefined;
    out[name] = ref ? { Id: ref.Id } : null;
  }
}

function itemOf(item: OwnedItemType, raw: Record<string, unknown>): WriteItem {
  const out: WriteItem = {};
  if (typeof raw.Id === 'string') out.Id = raw.Id;
  scalarsOf(item.fields, raw, out);
  relationsOf(item.relations, raw, out);
  return out;
}

/** The canonical body of a validated raw body: read-only and unknown-to-writes members dropped. */
export function toWriteBody(entity: EntityDefinition, raw: Record<string, unknown>): WriteBody {
  const out: WriteBody = {};
  scalarsOf(entity.fields, raw, out);
  relationsOf(entity.relations, raw, out);
  for (const owned of ownedCollectionsOf(entity)) {
    const items = (raw[owned.name] as Record<string, unknown>[] | null | undefined) ?? [];
    out[owned.name] = items.map((item) => itemOf(owned.item, item));
  }
  return out;
}

/** Validates a raw POST/PUT body and returns its canonical form (400 on any problem). */
export function parseWriteBody(
  entity: EntityDefinition,
  raw: unknown,
  geometryLimits: GeometryLimits,
  key?: number,
): WriteBody {
  assertValidBody(entity, raw, geometryLimits);
  if (key !== undefined) assertIdMatchesKey(entity, raw, key);
  return toWriteBody(entity, raw);
}
