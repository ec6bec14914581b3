import type { Request } from 'express';
import type { RoleName } from '../../domain/auth/roles';

/** Who is calling: the token's subject and the roles it holds (claim plus service grants). */
export interface Caller {
  subject: string;
  roles: string[];
  /** When the bearer token stops being valid (its `exp`, ms since the epoch); absent in mock mode. */
  expiresAt?: number;
  /**
   * The roles the token itself claims, which the service's grants are merged with: a long-lived
   * request (GET /Changes) re-checks `roles` from them. Absent in mock mode (roles fixed by config).
   */
  tokenRoles?: RoleName[];
}

declare module 'express-serve-static-core' {
  interface Request {
    caller?: Caller;
  }
}

/** The authenticated caller of a request that passed the auth middleware. */
export function callerOf(req: Request): Caller {
  if (!req.caller) throw new Error('no authenticated caller on this request (auth middleware not mounted?)');
  return req.caller;
}
