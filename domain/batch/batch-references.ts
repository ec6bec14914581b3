import { MAX_BODY_DEPTH } from '../json/storable-json';

/**
 * `$<id>` references of a `$batch` (DESIGN §12): `{ "Id": "$a1" }` anywhere a relation is written
 * (POST/PUT bodies, PATCH values) and a PATCH operation setting a `/…/Id` path to `"$a1"` name the
 * entity an earlier request of the batch created. Walks are iterative and stop at MAX_BODY_DEPTH
 * (a deeper body fails its own validation), so no body can exhaust the stack.
 */

/** The request id a value refers to, or undefined when it is not a reference. */
export function referencedId(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 1 && value.startsWith('$') ? value.slice(1) : undefined;
}

type Visit = (holder: Record<string, unknown>, member: string, id: string) => void;

/** Calls `visit` for every reference in `body` (PATCH operations when `patch` is set). */
function eachReference(body: unknown, patch: boolean, visit: Visit): void {
  const stack: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object' || depth > MAX_BODY_DEPTH) continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    const record = value as Record<string, unknown>;
    const relationId = Object.hasOwn(record, 'Id') ? referencedId(record.Id) : undefined;
    if (relationId !== undefined) visit(record, 'Id', relationId);
    if (patch && depth === 1 && typeof record.path === 'string' && /\/Id$/.test(record.path)) {
      const pathId = referencedId(record.value);
      if (pathId !== undefined) visit(record, 'value', pathId);
    }
    for (const member of Object.keys(record)) stack.push({ value: record[member], depth: depth + 1 });
  }
}

/** The request ids `body` refers to, each once. */
export function referencesIn(body: unknown, patch: boolean): string[] {
  const ids = new Set<string>();
  eachReference(body, patch, (_holder, _member, id) => ids.add(id));
  return [...ids];
}

/**
 * A copy of `body` with each reference replaced by the encoded Id `resolve` gives (the entity that
 * request created). `resolve` throws for a reference it cannot resolve.
 */
export function withReferencesResolved<T>(body: T, patch: boolean, resolve: (id: string) => string): T {
  if (body === null || typeof body !== 'object') return body;
  const copy = structuredClone(body);
  eachReference(copy, patch, (holder, member, id) => {
    holder[member] = resolve(id);
  });
  return copy;
}
