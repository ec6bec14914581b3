import type { Request } from 'express';
import { CONSISTENCY_TOKEN_HEADER, positionOfToken, type WalPosition } from '../../db/replicas/consistency-token';

/** The WAL position a read must see, from the `X-Consistency-Token` it sends back (DESIGN §14). */
export function readAfter(req: Request): WalPosition | undefined {
  const token = req.get(CONSISTENCY_TOKEN_HEADER);
  return token === undefined ? undefined : positionOfToken(token);
}
