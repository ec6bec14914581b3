import type { Knex } from 'knex';

/**
 * WAL positions of the primary (DESIGN §14): a write's answer names the position the primary had
 * written up to after it committed (the API sends it as `X-Consistency-Token`,
 * api/http/consistency.ts), and a read that sends it back is served only by a database that has
 * replayed that far.
 */

/** A WAL position as a number that compares (`pg_lsn` is two 32-bit halves). */
export type WalPosition = bigint;

const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/;

/** A position from its two 32-bit halves in hex. */
export function positionOfHalves(high: string, low: string): WalPosition {
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** Postgres's text form of a `pg_lsn` → a position. */
export function positionOfLsn(lsn: string): WalPosition {
  const match = LSN.exec(lsn.toUpperCase());
  if (!match) throw new Error(`not an LSN: ${lsn}`);
  return positionOfHalves(match[1]!, match[2]!);
}

/**
 * The primary's WAL position now, as Postgres writes a `pg_lsn` (`16/B374D848`): at or past every
 * commit that has returned (asked after the commit, on any connection to the primary).
 */
export async function walPositionNow(primary: Pick<Knex, 'raw'>): Promise<string> {
  const result = await primary.raw<{ rows: { lsn: string }[] }>('select pg_current_wal_lsn()::text as lsn');
  const lsn = result.rows[0]!.lsn;
  positionOfLsn(lsn); // only LSNs leave here
  return lsn;
}

/** The position as Postgres's `pg_lsn` text, for comparing on a replica. */
export function lsnOfPosition(at: WalPosition): string {
  return `${(at >> 32n).toString(16).toUpperCase()}/${(at & 0xffffffffn).toString(16).toUpperCase()}`;
}
