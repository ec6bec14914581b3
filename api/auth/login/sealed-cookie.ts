import { hkdfSync } from 'node:crypto';
import { EncryptJWT, jwtDecrypt, type JWTPayload } from 'jose';

/**
 * What the Bull Board login keeps in the browser instead of in a process (the API runs as many
 * stateless processes): JWTs encrypted and authenticated with AES-256-GCM (`dir` JWE) under a key
 * derived from BULL_BOARD_SESSION_SECRET, one key per purpose so a login-transaction cookie can
 * never pass for a session. A cookie that was altered, was sealed under another secret or for
 * another purpose, or has expired opens to `undefined`.
 */

export type CookiePurpose = 'session' | 'login-transaction';

export interface CookieSeal {
  seal(claims: JWTPayload, ttlSeconds: number, now?: number): Promise<string>;
  open(value: string | undefined): Promise<JWTPayload | undefined>;
}

const ISSUER = 'emapi-bull-board';

export function cookieSeal(secret: string, purpose: CookiePurpose): CookieSeal {
  const key = new Uint8Array(hkdfSync('sha256', secret, 'emapi bull board login', purpose, 32));
  return {
    seal(claims, ttlSeconds, now = Math.floor(Date.now() / 1000)) {
      return new EncryptJWT(claims)
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .setIssuer(ISSUER)
        .setAudience(purpose)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .encrypt(key);
    },
    async open(value) {
      if (!value) return undefined;
      try {
        const { payload } = await jwtDecrypt(value, key, {
          issuer: ISSUER,
          audience: purpose,
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256GCM'],
          requiredClaims: ['exp'],
        });
        return payload;
      } catch {
        return undefined;
      }
    },
  };
}
