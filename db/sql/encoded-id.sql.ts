import { zeroPoint } from '../../domain/ids/id-codec';

/**
 * SQL of an encoded Id: the same function as domain/ids/id-codec.ts, computed in Postgres
 * (base64url of the big-endian int4 `key XOR zeroPoint`, padding trimmed). Immutable, so it can
 * back a generated column.
 */
export function encodedIdSql(typeName: string, keyColumnSql: string): string {
  return `rtrim(translate(encode(int4send(${keyColumnSql} # (${zeroPoint(typeName)})), 'base64'), '+/', '-_'), '=')`;
}

/**
 * The same text as `encodedIdSql`, cheaper to compute for bulk output (the export): 4 bytes always
 * encode to 6 characters and `==`, so the padding is cut by length, and `replace` does not walk the
 * text character by character as `translate` does (1M Ids: 110 instead of 240 ms of Postgres CPU).
 * Not for generated columns: those must keep `encodedIdSql`'s text (the schema drift test).
 */
export function encodedIdFastSql(typeName: string, keyColumnSql: string): string {
  return `replace(replace(left(encode(int4send(${keyColumnSql} # (${zeroPoint(typeName)})), 'base64'), 6), '+', '-'), '/', '_')`;
}

/** ISO 8601 UTC with milliseconds, the form every timestamp takes in a response. */
export function isoTimestampSql(columnSql: string): string {
  return `to_char(${columnSql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
