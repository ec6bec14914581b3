import type { Request } from 'express';
import { badRequest } from '../../domain/errors/domain-error';
import { positionOfHalves, positionOfLsn, type WalPosition } from '../../db/replicas/wal-position';

/**
 * `X-Consistency-Token` (DESIGN §14): an opaque string naming a WAL position of the primary at or
 * after a write's commit (db/replicas/wal-position.ts). A read that sends it back is served only by
 * a database that has replayed that far. The text is the LSN (`16/B374D848`) as `16-B374D848`;
 * clients keep it whole.
 */

export const CONSISTENCY_TOKEN_HEADER = 'x-consistency-token';

const TOKEN = /^([0-9A-F]{1,8})-([0-9A-F]{1,8})$/;

/** The token of a WAL position in Postgres's `pg_lsn` text. */
export function tokenOfLsn(lsn: string): string {
  positionOfLsn(lsn); // only LSNs become tokens
  return lsn.toUpperCase().replace('/', '-');
}

/** The position a token names; anything else this service never issued is a 400 naming the header. */
export function positionOfToken(token: string): WalPosition {
  const match = TOKEN.exec(token.trim().toUpperCase());
  if (!match) {
    throw badRequest(
      'X-Consistency-Token: not a token this service issued (send back the header of a write answer as it came)',
    );
  }
  return positionOfHalves(match[1]!, match[2]!);
}

/** The WAL position a read must see, from the `X-Consistency-Token` it sends back. */
export function readAfter(req: Request): WalPosition | undefined {
  const token = req.get(CONSISTENCY_TOKEN_HEADER);
  return token === undefined ? undefined : positionOfToken(token);
}
