import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (DESIGN §16, https://www.standardwebhooks.com): the secret is
 * `whsec_` + base64 of 32 random bytes; the signature of a message is
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed by the secret's
 * decoded bytes.
 */

const PREFIX = 'whsec_';

export function generateSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key bytes of a `whsec_` secret. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The `webhook-signature` header value for one attempt. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
