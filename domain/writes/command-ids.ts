import { createHash, randomUUID } from 'node:crypto';

/**
 * Command ids (the `commands` job id and the command_log key) and request fingerprints for
 * `Idempotency-Key` replays.
 */

export function newCommandId(): string {
  return randomUUID();
}

function uuidFromDigest(digest: Buffer): string {
  const b = Buffer.from(digest.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x50; // version 5 layout: name-based, SHA digest
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The same caller and `Idempotency-Key` always give the same command id, so a repeat finds the
 * first command (its job, or its command_log row) instead of creating anything.
 */
export function idempotentCommandId(subject: string, idempotencyKey: string): string {
  return uuidFromDigest(createHash('sha256').update(`idempotency\n${subject}\n${idempotencyKey}`).digest());
}

/** JSON with object keys sorted, so equal bodies hash equally whatever their member order. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** stableStringify's text in pieces, split at members and elements down to `depth` levels. */
function* stablePieces(value: unknown, depth: number): Generator<string> {
  if (depth === 0 || !value || typeof value !== 'object') {
    yield stableStringify(value);
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ',';
      yield* stablePieces(value[i], depth - 1);
    }
    yield ']';
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  yield '{';
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i]!;
    yield `${i > 0 ? ',' : ''}${JSON.stringify(k)}:`;
    yield* stablePieces(v, depth - 1);
  }
  yield '}';
}

export const IDEMPOTENCY_KEY_REUSED = 'Idempotency-Key: was already used for a different request';

/** Fingerprint of a write request: a key reused with another request is a conflict. */
export function requestHash(method: string, route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} /${route}\n${stableStringify(body)}`)
    .digest('hex');
}

/**
 * requestHash of a body of many megabytes (a `$batch` under an Idempotency-Key): the same digest,
 * its text built and hashed a request at a time with `pause` between pieces, so that 16 MiB of it
 * never holds the API's event loop in one call.
 */
export async function requestHashInSlices(
  method: string,
  route: string,
  body: unknown,
  pause: () => Promise<void>,
): Promise<string> {
  const hash = createHash('sha256').update(`${method} /${route}\n`);
  // { requests: [ {…}, … ] }: the body, its members, each request.
  for (const piece of stablePieces(body, 3)) {
    hash.update(piece);
    await pause();
  }
  return hash.digest('hex');
}
