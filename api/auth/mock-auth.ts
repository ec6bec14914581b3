import type { RequestHandler } from 'express';
import type { MockRole } from '../../infra/config/load-config';

export const MOCK_SUBJECT = 'mock-user';

/**
 * Development mode (spec §5.6): every request is the same authenticated caller, with the role set
 * by AUTH_MOCK_ROLE (`none` = authenticated without a role). No token is read.
 */
export function mockAuth(role: MockRole): RequestHandler {
  const roles = role === 'none' ? [] : [role];
  return (req, _res, next) => {
    req.caller = { subject: MOCK_SUBJECT, roles };
    next();
  };
}
