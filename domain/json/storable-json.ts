import { validationFailed } from '../errors/domain-error';
import { unstorableTextReason } from '../text/storable-text';
import { memberPath } from './member-path';

/** Deeper than any entity (object → collection → item → relation → Id is 5): refuse before walking on. */
export const MAX_BODY_DEPTH = 16;
/** Enough to show a client what is wrong without building an answer as large as its body. */
const MAX_ERRORS = 20;

function pointerOf(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Refuses, with a 400 naming each place, JSON a column cannot hold whatever the schema says:
 * strings (values and member names) with U+0000 or unpaired surrogates, numbers that are not
 * finite (`1e400` parses to Infinity), and nesting deeper than MAX_BODY_DEPTH. Iterative, so no
 * body can exhaust the stack; runs before schema validation, which then words everything else.
 */
export function assertStorableJson(entityName: string, raw: unknown, at: readonly (string | number)[] = []): void {
  const errors: string[] = [];
  // Paths are kept relative to `at` (a client's JSON Pointer, as long as its body allows): copying
  // or printing it for every node would cost its length times the value's size (a 40 KB path and a
  // 40 KB array held the event loop, then ran out of heap). It is printed only for an error.
  const prefix = pointerOf(at);
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: raw, path: [] }];
  while (stack.length && errors.length < MAX_ERRORS) {
    const { value, path } = stack.pop()!;
    const where = () => `${entityName}${memberPath(prefix + pointerOf(path))}`;
    if (typeof value === 'string') {
      const reason = unstorableTextReason(value);
      if (reason) errors.push(`${where()}: ${reason}`);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) errors.push(`${where()}: must be a finite number`);
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= MAX_BODY_DEPTH) {
        errors.push(`${where()}: nested deeper than ${MAX_BODY_DEPTH} levels`);
        continue;
      }
      const entries: [string | number, unknown][] = Array.isArray(value)
        ? value.map((item, i) => [i, item])
        : Object.entries(value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, child] = entries[i]!;
        if (typeof name === 'string') {
          const reason = unstorableTextReason(name);
          if (reason) {
            errors.push(`${where()}: a member name ${reason}`);
            continue;
          }
        }
        stack.push({ value: child, path: [...path, name] });
      }
    }
  }
  if (errors.length) throw validationFailed(errors);
}
