import { InvalidRequestError, InvalidTokenError, UnauthorizedError } from 'express-oauth2-jwt-bearer';
import { unauthorized, type DomainError } from '../../domain/errors/domain-error';

/**
 * 401 answers (RFC 6750 §3): a problem body plus a `WWW-Authenticate: Bearer` challenge. A request
 * without credentials gets the bare challenge; a bad one names the error code. Descriptions are
 * our own fixed sentences: the verifier's messages can carry internal URLs, so they go only to
 * the log. The error handler writes the answer; this module only knows what it says.
 */

/** Verifier messages (jose and express-oauth2-jwt-bearer) → what a client is told. */
const TOKEN_FAULTS: readonly [RegExp, string][] = [
  [/"exp"|'exp'/, 'The token has expired.'],
  [/"nbf"|'nbf'/, 'The token is not valid yet.'],
  [/"iat"|'iat'/, 'The token has an invalid issue time.'],
  [/'iss'|"iss"/, 'The token was not issued by the issuer this API trusts.'],
  [/'aud'|"aud"/, 'The token was not issued for this API (audience).'],
  [
    /alg|algorithm|no applicable key|key.*(type|usage)/i,
    'The token is signed with an algorithm or key this API does not accept.',
  ],
  [/signature/i, 'The token signature is invalid.'],
];

/** The verifier's refusal as the Unauthorized failure a client is shown. */
export function unauthorizedOf(err: UnauthorizedError): DomainError {
  if (err instanceof InvalidTokenError) {
    const fault = TOKEN_FAULTS.find(([pattern]) => pattern.test(err.message));
    return unauthorized(fault?.[1] ?? 'The token is invalid.', 'invalid_token');
  }
  if (err instanceof InvalidRequestError) {
    return unauthorized("The Authorization header must read 'Bearer <token>'.", 'invalid_request');
  }
  return unauthorized('A bearer token is required.');
}

export function isAuthError(err: unknown): err is UnauthorizedError {
  return err instanceof UnauthorizedError;
}
