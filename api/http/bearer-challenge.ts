import type { TokenError } from '../../domain/errors/domain-error';

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750 §3): bare without credentials, naming the error
 * otherwise. Part of the answer itself (answer.ts), so a request in a `$batch`
 * carries the same challenge as the same request alone.
 */

const REALM = 'emapi';

export function bearerChallenge(tokenError: TokenError | undefined, description = ''): string {
  return tokenError
    ? `Bearer realm="${REALM}", error="${tokenError}", error_description="${description}"`
    : `Bearer realm="${REALM}"`;
}
