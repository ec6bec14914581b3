/**
 * Whether `Buffer.byteLength(JSON.stringify(value))` exceeds `limit`, found by looking at no more
 * than about `limit` bytes of it: a 16 MiB `$batch` body checked against the 1 MiB limit of one
 * request is not serialised whole (that was one 16-47 ms call per request in the hostile fuzz).
 * Iterative, so no nesting exhausts the stack. For JSON data (what a parser builds).
 */
export function jsonByteLengthExceeds(value: unknown, limit: number): boolean {
  let left = limit;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      // Every UTF-16 unit is at least one byte of JSON text: a longer string is over unread.
      if (v.length + 2 > left) return true;
      left -= Buffer.byteLength(JSON.stringify(v));
    } else if (Array.isArray(v)) {
      left -= 2 + Math.max(0, v.length - 1);
      if (left < 0) return true;
      // JSON writes `null` for what it cannot hold in an array.
      for (const item of v) stack.push(item === undefined || typeof item === 'function' ? null : item);
    } else if (v !== null && typeof v === 'object') {
      left -= 2;
      let members = 0;
      for (const name in v) {
        if (!Object.prototype.hasOwnProperty.call(v, name)) continue;
        const member = (v as Record<string, unknown>)[name];
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        if (name.length + 3 > left) return true;
        left -= Buffer.byteLength(JSON.stringify(name)) + 1 + (members > 0 ? 1 : 0);
        members += 1;
        stack.push(member);
        if (left < 0) return true;
      }
    } else {
      left -= (JSON.stringify(v) as string | undefined)?.length ?? 0;
    }
    if (left < 0) return true;
  }
  return false;
}
