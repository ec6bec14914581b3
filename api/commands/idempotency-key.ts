import type { Request } from 'express';
import { badRequest } from '../../domain/errors/domain-error';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's `Idempotency-Key` (POST of an entity, `POST /$batch`), checked; undefined when absent. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters.');
  return key;
}
