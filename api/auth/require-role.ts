import type { RequestHandler } from 'express';
import { POLICY, policyAllows, type Policy } from '../../domain/auth/roles';
import { problem, sendProblem } from '../http/problem';
import { sendUnauthorized } from './unauthorized';

/**
 * Role policies of spec §5. An authenticated caller lacking the role gets 403, never 401 — which is
 * why this is ours and not the verifier's `claimCheck` (that one answers 401, DESIGN §11).
 */
export function requireRole(policy: Policy): RequestHandler {
  const needed = policy.join(' or ');
  return (req, res, next) => {
    if (!req.caller) {
      sendUnauthorized(res, { description: 'A bearer token is required.' });
      return;
    }
    if (policyAllows(policy, req.caller.roles)) {
      next();
      return;
    }
    sendProblem(res, problem(403, 'Forbidden', `This action needs the role ${needed}.`));
  };
}

/** Every entity route, /Export and /Roles/Available: User or Admin. */
export const requireDefaultPolicy = requireRole(POLICY.default);

/** /Jobs, Bull Board and /Roles/Assignments. */
export const requireAdmin = requireRole(POLICY.adminOnly);
