import type { Request } from 'express';

/** Who is calling: the token's subject and the roles it holds (claim plus service grants). */
export interface Caller {
  subject: string;
  roles: string[];
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
