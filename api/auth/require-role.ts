import type { RequestHandler } from 'express';
import { policyAllows, type Policy } from '../../domain/auth/roles';
import { forbidden, unauthorized } from '../../domain/errors/domain-error';

/**
 * Role policies of spec §5, as the route table gives them (api/routes/route-table.ts). An authenticated caller lacking the role gets 403, never 401 — which is
 * why this is ours and not the verifier's `claimCheck` (that one answers 401, DESIGN §11).
 */
export function requireRole(policy: Policy): RequestHandler {
  const needed = policy.join(' or ');
  return (req, _res, next) => {
    if (!req.caller) next(unauthorized('A bearer token is required.'));
    else if (policyAllows(policy, req.caller.roles)) next();
    else next(forbidden(`This action needs the role ${needed}.`));
  };
}
