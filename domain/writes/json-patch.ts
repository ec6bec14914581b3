import { JsonPatchError, applyOperation, deepClone, type Operation } from 'fast-json-patch';
import type { PatchOperation } from '../commands/command';
import { READ_ONLY_MEMBERS, type EntityDefinition } from '../entities';
import { badRequest, conflict, validationFailed, type DomainError } from '../errors/domain-error';
import { memberPath } from '../json/member-path';
import { assertStorableJson } from '../json/storable-json';
import { DEFAULT_GEOMETRY_LIMITS, geometryLimitErrorsAt, type GeometryLimits } from './geometry-limits';
import { ownedCollectionsOf } from './ownership';

/**
 * JSON Patch (RFC 6902) on an entity as clients read it (spec §4.3, DESIGN §6, §10): a malformed
 * operation is a 400 before anything is queued; an operation that does not fit the current
 * document (missing path, failed `test`) is a 409 when it is applied under the row lock.
 */

export const PATCH_OPS: readonly PatchOperation['op'][] = ['add', 'remove', 'replace', 'move', 'copy', 'test'];
const NEEDS_VALUE = new Set(['add', 'replace', 'test']);
const NEEDS_FROM = new Set(['move', 'copy']);
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;
const READ_ONLY = new Set<string>(READ_ONLY_MEMBERS);

/** RFC 6901: empty, or `/`-separated segments where `~` only starts `~0` or `~1`. */
function isPointer(value: unknown): value is string {
  return typeof value === 'string' && (value === '' || (value.startsWith('/') && !/~(?![01])/.test(value)));
}

/** The unescaped segments of an RFC 6901 pointer (`/a~1b/0` → `['a/b', '0']`). */
export function segmentsOf(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Paths a patch may not change: the entity's read-only members, collections written through their
 * own routes, members of an owned item that the service sets (its Id, timestamps, back-reference),
 * and members of a related entity other than its `Id` (a relation is changed, never its target).
 */
export function readOnlyReason(entity: EntityDefinition, pointer: string): string | null {
  const [first, second, third, fourth] = segmentsOf(pointer);
  if (first === undefined) return null;
  if (READ_ONLY.has(first)) return 'is read-only';
  // Own properties only: `constructor` or `toString` name no relation or collection.
  if (Object.hasOwn(entity.relations, first)) return second !== undefined && second !== 'Id' ? 'is read-only' : null;
  if (!Object.hasOwn(entity.collections, first)) return null;
  const collection = entity.collections[first]!;
  if (!collection.owned) return 'is read-only';
  const owned = ownedCollectionsOf(entity).find((o) => o.name === first)!;
  if (third === undefined) return null;
  if (READ_ONLY.has(third) || third === owned.item.backReference) return 'is read-only';
  if (Object.hasOwn(owned.item.relations, third))
    return fourth !== undefined && fourth !== 'Id' ? 'is read-only' : null;
  return null;
}

function at(entity: EntityDefinition, pointer: unknown): string {
  return `${entity.name}${isPointer(pointer) ? memberPath(pointer) : ''}`;
}

export interface PatchLimits {
  /** MAX_PATCH_OPERATIONS: operations in one PATCH. */
  maxOperations: number;
  /** MAX_PATCHED_DOCUMENT_BYTES: the document as it grows, operation by operation. */
  maxDocumentBytes: number;
}

export const DEFAULT_PATCH_LIMITS: PatchLimits = { maxOperations: 100, maxDocumentBytes: 1024 * 1024 };

/**
 * A `copy` or `move` whose source is the whole document or a whole collection: one such operation
 * doubles what it copies, so a handful of them in a 1 KB request would build gigabytes (DESIGN §13).
 */
function copiesWholeCollection(entity: EntityDefinition, from: string): boolean {
  const segments = segmentsOf(from);
  return segments.length === 0 || (segments.length === 1 && Object.hasOwn(entity.collections, segments[0]!));
}

/**
 * Checks the shape of a PATCH body and returns its operations; throws 400 `Bad Request` when the
 * body is not an array (spec §4.3) or has more than MAX_PATCH_OPERATIONS operations, and 400
 * `Validation Failed` listing every malformed operation. Runs in the API, before anything is queued.
 */
export function parsePatch(
  entity: EntityDefinition,
  body: unknown,
  limits: PatchLimits = DEFAULT_PATCH_LIMITS,
  geometryLimits: GeometryLimits = DEFAULT_GEOMETRY_LIMITS,
): PatchOperation[] {
  if (!Array.isArray(body)) throw badRequest('JSON Patch must be an array.');
  if (body.length > limits.maxOperations) {
    throw badRequest(
      `JSON Patch: ${body.length} operations exceed the limit of ${limits.maxOperations} (MAX_PATCH_OPERATIONS).`,
    );
  }
  const errors: string[] = [];
  const ops: PatchOperation[] = [];
  body.forEach((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      errors.push(`${entity.name}: operation ${i} must be an object`);
      return;
    }
    const { op, path, from } = raw as Record<string, unknown>;
    const where = at(entity, path);
    if (!PATCH_OPS.includes(op as PatchOperation['op'])) {
      errors.push(`${where}: operation ${i} has unknown op ${JSON.stringify(op ?? null)}`);
      return;
    }
    const name = op as PatchOperation['op'];
    const before = errors.length;
    if (!isPointer(path)) errors.push(`${entity.name}: operation ${i} (${name}) has an invalid path`);
    if (NEEDS_FROM.has(name) && !isPointer(from)) {
      errors.push(`${where}: operation ${i} (${name}) needs a valid 'from' pointer`);
    }
    if (NEEDS_VALUE.has(name) && !('value' in raw)) errors.push(`${where}: operation ${i} (${name}) needs a value`);
    if (errors.length > before) return;
    if (NEEDS_FROM.has(name) && copiesWholeCollection(entity, from as string)) {
      errors.push(
        `${at(entity, from)}: operation ${i} (${name}) cannot ${name} a whole collection or the whole document; ${name} single items`,
      );
      return;
    }
    if (NEEDS_VALUE.has(name)) {
      try {
        assertStorableJson(entity.name, (raw as { value: unknown }).value, segmentsOf(path as string));
      } catch (err) {
        errors.push(...(err as DomainError).errors.map((e) => `${e} (operation ${i})`));
        return;
      }
      // Geometry past its limits is refused here, not first read by the worker (DESIGN §13).
      const tooLarge = geometryLimitErrorsAt(
        entity,
        segmentsOf(path as string),
        (raw as { value: unknown }).value,
        geometryLimits,
      );
      if (tooLarge.length) {
        errors.push(...tooLarge.map((e) => `${e} (operation ${i})`));
        return;
      }
    }
    if (name !== 'test') {
      const reason = readOnlyReason(entity, path as string);
      if (reason) errors.push(`${where}: ${reason}`);
      if (name === 'move' && readOnlyReason(entity, from as string)) errors.push(`${at(entity, from)}: is read-only`);
    }
    const clean: PatchOperation = { op: name, path: path as string };
    if (NEEDS_FROM.has(name)) clean.from = from as string;
    if (NEEDS_VALUE.has(name)) clean.value = (raw as { value: unknown }).value;
    ops.push(clean);
  });
  if (errors.length) throw validationFailed(errors);
  return ops;
}

/** The value at `segments`, or `missing` when any step does not exist. */
function lookup(document: unknown, segments: string[]): { found: boolean; value: unknown } {
  let current: unknown = document;
  for (const seg of segments) {
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(seg) || Number(seg) >= current.length) return { found: false, value: undefined };
      current = current[Number(seg)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, seg)) {
      current = (current as Record<string, unknown>)[seg];
    } else {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value: current };
}

/** RFC 6901 array indexes have no leading zeros (fast-json-patch would read `01` as 1). */
function hasNonCanonicalIndex(document: unknown, pointer: string): boolean {
  const segments = segmentsOf(pointer);
  let current: unknown = document;
  for (const [i, seg] of segments.entries()) {
    if (Array.isArray(current)) {
      const last = i === segments.length - 1;
      if (!ARRAY_INDEX.test(seg)) return !(last && seg === '-');
      current = current[Number(seg)];
    } else if (typeof current === 'object' && current !== null) {
      current = (current as Record<string, unknown>)[seg];
    } else {
      return false;
    }
  }
  return false;
}

/**
 * `/Address/Id` names the relation by its encoded Id (spec §4.3). While the relation is null there
 * is no object to hold an `Id`, so setting it sets the whole relation.
 */
function relationIdOnNull(document: unknown, op: PatchOperation): PatchOperation {
  if ((op.op !== 'add' && op.op !== 'replace') || !op.path.endsWith('/Id')) return op;
  const parentPointer = op.path.slice(0, -'/Id'.length);
  const parent = lookup(document, segmentsOf(parentPointer));
  if (!parent.found || parent.value !== null) return op;
  return { op: 'replace', path: parentPointer, value: { Id: op.value } };
}

function applyFailure(entity: EntityDefinition, op: PatchOperation, i: number, err: unknown): DomainError {
  const where = at(entity, op.path);
  const code = err instanceof JsonPatchError ? err.name : undefined;
  switch (code) {
    case 'TEST_OPERATION_FAILED':
      return conflict([`${where}: test failed (operation ${i})`]);
    case 'OPERATION_FROM_UNRESOLVABLE':
      return conflict([`${at(entity, op.from)}: does not exist (operation ${i}, ${op.op} from)`]);
    case 'OPERATION_PATH_UNRESOLVABLE':
    case 'OPERATION_PATH_CANNOT_ADD':
    case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX':
    case 'OPERATION_VALUE_OUT_OF_BOUNDS':
      return conflict([`${where}: does not exist (operation ${i}, ${op.op})`]);
    default:
      // Malformed after all (e.g. a `__proto__` path, refused by fast-json-patch).
      return validationFailed([`${where}: operation ${i} (${op.op}) cannot be applied`]);
  }
}

/** Serialized size of a JSON value in UTF-8 bytes (what the document would take). */
function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/**
 * Applies `ops` in order to a copy of `document`; the result still needs validating as a whole.
 * The document's size is tracked as it grows (what each add, replace or copy puts in), and a patch
 * that would take it past MAX_PATCHED_DOCUMENT_BYTES stops before that operation is applied, so no
 * patch can make a worker build more than the limit.
 */
export function applyPatch(
  entity: EntityDefinition,
  document: unknown,
  ops: readonly PatchOperation[],
  limits: PatchLimits = DEFAULT_PATCH_LIMITS,
): unknown {
  let current = deepClone(document) as unknown;
  let size = jsonBytes(current);
  ops.forEach((given, i) => {
    const op = relationIdOnNull(current, deepClone(given) as PatchOperation);
    if (hasNonCanonicalIndex(current, op.path) || (op.from !== undefined && hasNonCanonicalIndex(current, op.from))) {
      throw conflict([`${at(entity, op.path)}: does not exist (operation ${i}, ${op.op})`]);
    }
    // Only what an operation adds can grow the document; removals are not credited (an upper bound).
    const added =
      op.op === 'add' || op.op === 'replace'
        ? jsonBytes(op.value)
        : op.op === 'copy'
          ? jsonBytes(lookup(current, segmentsOf(op.from!)).value)
          : 0;
    if (size + added > limits.maxDocumentBytes) {
      throw badRequest(
        `JSON Patch: operation ${i} (${op.op}) would make the document larger than ${limits.maxDocumentBytes} bytes (MAX_PATCHED_DOCUMENT_BYTES).`,
      );
    }
    size += added;
    try {
      current = applyOperation(current, op as Operation, true, true).newDocument;
    } catch (err) {
      throw applyFailure(entity, op, i, err);
    }
  });
  return current;
}
