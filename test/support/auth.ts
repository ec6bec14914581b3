import type { ExecutionContext } from 'ava';
import type { HttpResult } from './stack';

/** Assertions shared by the auth test files. */

/** A 401 problem with a Bearer challenge; `error` is the RFC 6750 code when the request had a token. */
export function assertUnauthorized(
  t: ExecutionContext,
  res: HttpResult,
  error?: 'invalid_token' | 'invalid_request',
  detail?: RegExp,
): void {
  t.is(res.status, 401, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.like(res.body as object, { type: 'about:blank', title: 'Unauthorized', status: 401 });
  const challenge = res.headers.get('www-authenticate') ?? '';
  t.true(challenge.startsWith('Bearer realm="emapi"'), challenge);
  if (error) t.true(challenge.includes(`error="${error}"`), challenge);
  else t.false(challenge.includes('error='), challenge);
  if (detail) t.regex((res.body as { detail?: string }).detail ?? '', detail);
}

export function assertForbidden(t: ExecutionContext, res: HttpResult): void {
  t.is(res.status, 403, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.like(res.body as object, { type: 'about:blank', title: 'Forbidden', status: 403 });
  t.is(res.headers.get('www-authenticate'), null);
}

/** An unsecured JWT (`alg: none`, empty signature) with the given claims. */
export function unsecuredToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
