import { JsonPatchError, applyOperation, deepClone, type Operation } from 'fast-json-patch';
import type { PatchOperation } from '../commands/command';
import { badRequest, conflict, validationFailed, type DomainError } from '../errors/domain-error';
import { assertStorableJson } from '../json/storable-json';
import { PATCH_OPS, segmentsOf } from '../writes/json-patch';
import { PATCHABLE_MEMBERS, SUBSCRIPTION_TYPE } from './subscription';

/**
 * JSON Patch on a subscription as GET shows it (DESIGN §16): only `Url`, `Events` (whole, or its
 * items) and `Active` may change; `test` may look anywhere. Shape errors are a 400 in the API,
 * before anything is queued; an operation that does not fit the current document is a 409 when the
 * command worker applies it under the row lock, and the result is validated as a whole there.
 */

const NEEDS_VALUE = new Set(['add', 'replace', 'test']);
const NEEDS_FROM = new Set(['move', 'copy']);
const POINTER = /^(\/([^~]|~[01])*)*$/;

function where(pointer: unknown): string {
  if (typeof pointer !== 'string' || !POINTER.test(pointer)) return SUBSCRIPTION_TYPE;
  const segments = segmentsOf(pointer).map((s) => s.slice(0, 100));
  return [SUBSCRIPTION_TYPE, ...segments].join('.');
}

/** Why an operation may not change `pointer`, or null. */
function changeProblem(pointer: string): string | null {
  const [first, second, third] = segmentsOf(pointer);
  if (first === undefined) return 'the whole subscription cannot be replaced; patch Url, Events or Active';
  if (!PATCHABLE_MEMBERS.includes(first)) {
    return `cannot be patched (only ${PATCHABLE_MEMBERS.join(', ')} can)`;
  }
  if (first !== 'Events' && second !== undefined) return 'has no members';
  if (first === 'Events' && third !== undefined) return 'an event pattern is a string; it has no members';
  return null;
}

/**
 * Checks the shape of a PATCH body (an array of at most `maxOperations` RFC 6902 operations on the
 * patchable paths) and returns its operations; 400 otherwise, naming each bad operation's path.
 */
export function parseSubscriptionPatch(body: unknown, maxOperations: number): PatchOperation[] {
  if (!Array.isArray(body)) throw badRequest('JSON Patch must be an array.');
  if (body.length > maxOperations) {
    throw badRequest(
      `JSON Patch: ${body.length} operations exceed the limit of ${maxOperations} (MAX_PATCH_OPERATIONS).`,
    );
  }
  if (body.length === 0) throw validationFailed([`${SUBSCRIPTION_TYPE}: JSON Patch must hold at least one operation`]);
  const errors: string[] = [];
  const ops: PatchOperation[] = [];
  body.forEach((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      errors.push(`${SUBSCRIPTION_TYPE}: operation ${i} must be an object`);
      return;
    }
    const { op, path, from } = raw as Record<string, unknown>;
    if (!PATCH_OPS.includes(op as PatchOperation['op'])) {
      errors.push(`${where(path)}: operation ${i} has unknown op ${JSON.stringify(op ?? null)?.slice(0, 60)}`);
      return;
    }
    const name = op as PatchOperation['op'];
    if (typeof path !== 'string' || !POINTER.test(path)) {
      errors.push(`${SUBSCRIPTION_TYPE}: operation ${i} (${name}) has an invalid path`);
      return;
    }
    if (NEEDS_FROM.has(name) && (typeof from !== 'string' || !POINTER.test(from))) {
      errors.push(`${where(path)}: operation ${i} (${name}) needs a valid 'from' pointer`);
      return;
    }
    if (NEEDS_VALUE.has(name) && !('value' in raw)) {
      errors.push(`${where(path)}: operation ${i} (${name}) needs a value`);
      return;
    }
    if (NEEDS_VALUE.has(name)) {
      try {
        assertStorableJson(SUBSCRIPTION_TYPE, (raw as { value: unknown }).value, segmentsOf(path));
      } catch (err) {
        errors.push(...(err as DomainError).errors.map((e) => `${e} (operation ${i})`));
        return;
      }
    }
    if (name !== 'test') {
      const problem = changeProblem(path);
      if (problem) errors.push(`${where(path)}: ${problem}`);
      else if (NEEDS_FROM.has(name)) {
        // Only single patterns move around: a Url cannot be copied from elsewhere, unchecked.
        const [target, index] = segmentsOf(path);
        const [source, sourceIndex] = segmentsOf(from as string);
        if (target !== 'Events' || index === undefined || source !== 'Events' || sourceIndex === undefined) {
          errors.push(`${where(path)}: operation ${i} (${name}) may only ${name} single items of Events`);
        }
      } else if (name === 'remove' && segmentsOf(path).length === 1) {
        errors.push(`${where(path)}: cannot be removed (it is required)`);
      }
    }
    const clean: PatchOperation = { op: name, path };
    if (NEEDS_FROM.has(name)) clean.from = from as string;
    if (NEEDS_VALUE.has(name)) clean.value = (raw as { value: unknown }).value;
    ops.push(clean);
  });
  if (errors.length) throw validationFailed(errors);
  return ops;
}

/** The `Url` values a patch sets (for the private-network guard, which the API runs before queuing). */
export function urlsSetBy(ops: readonly PatchOperation[]): unknown[] {
  return ops.filter((op) => (op.op === 'add' || op.op === 'replace') && op.path === '/Url').map((op) => op.value);
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*|-)$/;

/** Applies the operations in order to a copy of the document; 409 for one that does not fit it. */
export function applySubscriptionPatch(document: unknown, ops: readonly PatchOperation[]): unknown {
  let current = deepClone(document) as unknown;
  ops.forEach((op, i) => {
    const indexes = [op.path, op.from].filter((p): p is string => p !== undefined).map((p) => segmentsOf(p)[1]);
    if (indexes.some((index) => index !== undefined && !ARRAY_INDEX.test(index))) {
      throw conflict([`${where(op.path)}: does not exist (operation ${i}, ${op.op})`]);
    }
    try {
      current = applyOperation(current, deepClone(op) as Operation, true, true).newDocument;
    } catch (err) {
      const code = err instanceof JsonPatchError ? err.name : undefined;
      if (code === 'TEST_OPERATION_FAILED') throw conflict([`${where(op.path)}: test failed (operation ${i})`]);
      if (code && /UNRESOLVABLE|CANNOT_ADD|ILLEGAL_ARRAY_INDEX|OUT_OF_BOUNDS/.test(code)) {
        throw conflict([`${where(op.path)}: does not exist (operation ${i}, ${op.op})`]);
      }
      throw validationFailed([`${where(op.path)}: operation ${i} (${op.op}) cannot be applied`]);
    }
  });
  return current;
}
