import { zeroPoint } from '../../domain/ids/id-codec';

/**
 * SQL of an encoded Id: the same function as domain/ids/id-codec.ts, computed in Postgres
 * (base64url of the big-endian int4 `key XOR zeroPoint`, padding trimmed). Immutable, so it can
 * back a generated column.
 */
export function encodedIdSql(typeName: string, keyColumnSql: string): string {
  return `rtrim(translate(encode(int4send(${keyColumnSql} # (${zeroPoint(typeName)})), 'base64'), '+/', '-_'), '=')`;
}

/** ISO 8601 UTC with milliseconds, the form every timestamp takes in a response. */
export function isoTimestampSql(columnSql: string): string {
  return `to_char(${columnSql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
