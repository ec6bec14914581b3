import type { RequestHandler } from 'express';
import { auth, type AuthOptions } from 'express-oauth2-jwt-bearer';
import { ConfigError, assertAuthConfigured, type AuthConfig } from '../../infra/config/load-config';
import { claimAt, mergeRoles, rolesInClaim } from '../../domain/auth/roles';
import { mockAuth } from './mock-auth';
import type { RoleGrants } from './role-grants';
import { unauthorized, type DomainError } from '../../domain/errors/domain-error';
import { isAuthError, unauthorizedOf } from './unauthorized';

/**
 * Verifier options, from AppConfig only. express-oauth2-jwt-bearer falls back to ISSUER_BASE_URL,
 * AUDIENCE, SECRET… from process.env for any option left undefined (DESIGN §11), so every such
 * option is given a value, '' meaning "not used".
 */
export function verifierOptions(config: AuthConfig): AuthOptions {
  const { issuerBaseURL, issuer, jwksUri, secret, audience } = config;
  if (!audience) throw new ConfigError('AUTH_AUDIENCE is required when authentication is on');
  if (secret && (issuerBaseURL || jwksUri)) {
    throw new ConfigError('AUTH_SECRET cannot be combined with AUTH_ISSUER_BASE_URL or AUTH_JWKS_URI: pick one');
  }
  if (!issuerBaseURL && !issuer) {
    throw new ConfigError(
      secret
        ? 'AUTH_SECRET needs AUTH_ISSUER: the exact "iss" value of the tokens'
        : 'AUTH_JWKS_URI needs AUTH_ISSUER: the exact "iss" value of the tokens',
    );
  }
  if (!issuerBaseURL && !jwksUri && !secret) {
    throw new ConfigError('AUTH_ISSUER needs AUTH_JWKS_URI (or AUTH_SECRET for local HS256 tokens)');
  }
  const tokenSigningAlg = config.tokenSigningAlg ?? '';
  if (secret && !/^HS(256|384|512)$/.test(tokenSigningAlg)) {
    throw new ConfigError(`AUTH_SECRET needs AUTH_TOKEN_SIGNING_ALG HS256, HS384 or HS512, got '${tokenSigningAlg}'`);
  }
  if (!secret && tokenSigningAlg.startsWith('HS')) {
    throw new ConfigError(`AUTH_TOKEN_SIGNING_ALG ${tokenSigningAlg} is symmetric: it needs AUTH_SECRET`);
  }
  return {
    issuerBaseURL: issuerBaseURL ?? '',
    issuer: issuer ?? '',
    jwksUri: jwksUri ?? '',
    secret: secret ?? '',
    tokenSigningAlg,
    audience,
    authRequired: true,
    // Plain bearer tokens only: no DPoP proofs, no token in the query string or body.
    dpop: { enabled: false },
  };
}

/**
 * A token in the query string (RFC 6750 §2.3) is refused before anything else is looked at: by a
 * lone request's authentication and by each request of a `$batch` (api/batch/batch-request-checks.ts).
 */
export function queryTokenRefusal(query: Record<string, unknown>): DomainError | undefined {
  return Object.hasOwn(query, 'access_token')
    ? unauthorized('Send the access token in the Authorization header, not in the query string.', 'invalid_request')
    : undefined;
}

/**
 * Establishes `req.caller` (subject + roles) or fails with Unauthorized (401), which the error
 * handler answers. Mock mode (spec §5.6) reads no token. Roles are the token's AUTH_ROLES_CLAIM
 * merged with the grants the service keeps.
 */
export function authenticate(config: AuthConfig, grants: RoleGrants): RequestHandler {
  assertAuthConfigured(config);
  if (config.mock) return mockAuth(config.mockRole);
  const verify = auth(verifierOptions(config));
  return (req, res, next) => {
    const refused = queryTokenRefusal(req.query as Record<string, unknown>);
    if (refused) {
      next(refused);
      return;
    }
    void verify(req, res, (err?: unknown) => {
      if (err) {
        if (!isAuthError(err)) {
          next(err);
          return;
        }
        req.log?.info({ reason: (err as Error).message }, 'authentication failed');
        next(unauthorizedOf(err));
        return;
      }
      const payload = req.auth?.payload ?? {};
      const subject = payload.sub;
      if (typeof subject !== 'string' || subject === '') {
        next(unauthorized('The token names no subject (sub).', 'invalid_token'));
        return;
      }
      const claimed = rolesInClaim(claimAt(payload, config.rolesClaim));
      grants.rolesOf(subject).then((granted) => {
        req.caller = {
          subject,
          roles: mergeRoles(claimed, granted),
          tokenRoles: claimed,
          // The verifier refuses a token without a numeric `exp`.
          ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp * 1000 } : {}),
        };
        next();
      }, next);
    });
  };
}
