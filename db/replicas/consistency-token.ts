import type { Knex } from 'knex';
import { badRequest } from '../../domain/errors/domain-error';

/**
 * `X-Consistency-Token` (DESIGN §14): an opaque string naming a WAL position of the primary at or
 * after a write's commit. A read that sends it back is served only by a database that has
 * replayed that far. The text is the LSN (`16/B374D848`) as `16-B374D848`; clients keep it whole.
 */

export const CONSISTENCY_TOKEN_HEADER = 'x-consistency-token';

const TOKEN = /^([0-9A-F]{1,8})-([0-9A-F]{1,8})$/;
const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/;

/** A WAL position as a number that compares (`pg_lsn` is two 32-bit halves). */
export type WalPosition = bigint;

function position(high: string, low: string): WalPosition {
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** Postgres's text form of a `pg_lsn` → a position. */
export function positionOfLsn(lsn: string): WalPosition {
  const match = LSN.exec(lsn.toUpperCase());
  if (!match) throw new Error(`not an LSN: ${lsn}`);
  return position(match[1]!, match[2]!);
}

export function tokenOfLsn(lsn: string): string {
  positionOfLsn(lsn); // only LSNs become tokens
  return lsn.toUpperCase().replace('/', '-');
}

/**
 * A token for writes that have committed: the primary's WAL position now, which is at or past
 * every commit that has returned (asked after the commit, on any connection to the primary).
 */
export async function consistencyTokenNow(primary: Pick<Knex, 'raw'>): Promise<string> {
  const result = await primary.raw<{ rows: { lsn: string }[] }>('select pg_current_wal_lsn()::text as lsn');
  return tokenOfLsn(result.rows[0]!.lsn);
}

/** The position a token names; anything else this service never issued is a 400 naming the header. */
export function positionOfToken(token: string): WalPosition {
  const match = TOKEN.exec(token.trim().toUpperCase());
  if (!match) {
    throw badRequest(
      'X-Consistency-Token: not a token this service issued (send back the header of a write answer as it came)',
    );
  }
  return position(match[1]!, match[2]!);
}

/** The position as Postgres's `pg_lsn` text, for comparing on a replica. */
export function lsnOfPosition(at: WalPosition): string {
  return `${(at >> 32n).toString(16).toUpperCase()}/${(at & 0xffffffffn).toString(16).toUpperCase()}`;
}
