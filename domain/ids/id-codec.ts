import { createHash } from 'node:crypto';

/**
 * Encoded identifiers of spec 2.3: base64url(int32BE(zeroPoint(type) XOR dbId)), 6 characters.
 * Obfuscation only. The zero-point is read little-endian, as the published vectors require.
 */

const zeroPoints = new Map<string, number>();

export function zeroPoint(typeName: string): number {
  let zp = zeroPoints.get(typeName);
  if (zp === undefined) {
    zp = createHash('sha256').update(typeName, 'utf8').digest().readInt32LE(0);
    zeroPoints.set(typeName, zp);
  }
  return zp;
}

/** Largest primary key the codec can carry (the encoded value is 32 bits). */
export const MAX_DB_ID = 2147483647;

export function encodeId(typeName: string, dbId: number): string {
  if (!Number.isInteger(dbId) || dbId < 0 || dbId > MAX_DB_ID) {
    throw new RangeError(`cannot encode ${typeName} key ${dbId}`);
  }
  const buf = Buffer.allocUnsafe(4);
  buf.writeInt32BE(zeroPoint(typeName) ^ dbId, 0);
  return buf.toString('base64url');
}

const CANONICAL = /^[A-Za-z0-9_-]{6}(==)?$/;

/**
 * Decodes an encoded Id of `typeName`. Only the canonical forms are accepted (6 characters, or 8
 * ending in `==`, that re-encode to themselves); anything else, and any value that decodes outside
 * the key range, gives null — callers report that as "not found".
 */
export function decodeId(typeName: string, text: string): number | null {
  if (!CANONICAL.test(text)) return null;
  const core = text.slice(0, 6);
  const bytes = Buffer.from(core, 'base64url');
  if (bytes.length !== 4) return null;
  const dbId = bytes.readInt32BE(0) ^ zeroPoint(typeName);
  if (dbId < 1) return null;
  return encodeId(typeName, dbId) === core ? dbId : null;
}

/**
 * Parses a route key or an `Id eq '…'` value. On routes that accept bare integers (spec 2.3), a key
 * made only of digits is the primary key itself — including the known ambiguity of an all-digit
 * encoded Id. Returns null for anything that names no possible row.
 */
export function parseKey(typeName: string, text: string, acceptsBareIntegers: boolean): number | null {
  if (acceptsBareIntegers && /^[0-9]+$/.test(text)) {
    const n = Number(text);
    return n >= 1 && n <= MAX_DB_ID && /^[1-9]/.test(text) ? n : null;
  }
  return decodeId(typeName, text);
}
