import type { RequestHandler } from 'express';
import { policyAllows, type Policy } from '../../domain/auth/roles';
import { forbidden, unauthorized, type DomainError } from '../../domain/errors/domain-error';
import type { Caller } from './caller';

/**
 * Role policies of spec §5, as the route table gives them (api/routes/route-table.ts). An authenticated caller lacking the role gets 403, never 401 — which is
 * why this is ours and not the verifier's `claimCheck` (that one answers 401, DESIGN §11).
 */

/** Why `caller` may not pass `policy`, or undefined when it may: a lone request's guard and each request of a `$batch` ask this. */
export function policyRefusal(policy: Policy, caller: Caller | undefined): DomainError | undefined {
  if (!caller) return unauthorized('A bearer token is required.');
  return policyAllows(policy, caller.roles)
    ? undefined
    : forbidden(`This action needs the role ${policy.join(' or ')}.`);
}

export function requireRole(policy: Policy): RequestHandler {
  return (req, _res, next) => next(policyRefusal(policy, req.caller));
}
