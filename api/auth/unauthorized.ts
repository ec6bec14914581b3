import type { Response } from 'express';
import { InvalidRequestError, InvalidTokenError, UnauthorizedError } from 'express-oauth2-jwt-bearer';
import { problem, sendProblem } from '../http/problem';

/**
 * 401 answers (RFC 6750 §3): a problem body plus a `WWW-Authenticate: Bearer` challenge. A request
 * without credentials gets the bare challenge; a bad one names the error code. Descriptions are
 * our own fixed sentences: the verifier's messages can carry internal URLs, so they go only to
 * the log.
 */

export type BearerError = 'invalid_request' | 'invalid_token';

export interface AuthFailure {
  error?: BearerError;
  description: string;
}

const REALM = 'emapi';

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

export function authFailureOf(err: unknown): AuthFailure {
  if (err instanceof InvalidTokenError) {
    const fault = TOKEN_FAULTS.find(([pattern]) => pattern.test(err.message));
    return { error: 'invalid_token', description: fault?.[1] ?? 'The token is invalid.' };
  }
  if (err instanceof InvalidRequestError) {
    return { error: 'invalid_request', description: "The Authorization header must read 'Bearer <token>'." };
  }
  return { description: 'A bearer token is required.' };
}

export function isAuthError(err: unknown): err is UnauthorizedError {
  return err instanceof UnauthorizedError;
}

export function sendUnauthorized(res: Response, failure: AuthFailure): void {
  const challenge = failure.error
    ? `Bearer realm="${REALM}", error="${failure.error}", error_description="${failure.description}"`
    : `Bearer realm="${REALM}"`;
  res.setHeader('WWW-Authenticate', challenge);
  sendProblem(res, problem(401, 'Unauthorized', failure.description));
}
