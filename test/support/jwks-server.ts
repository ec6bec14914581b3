import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/**
 * A tiny identity provider for tests: an RS256 key pair, its JWKS at `/.well-known/jwks.json` and
 * an OIDC discovery document at `/.well-known/openid-configuration`, on 127.0.0.1 port 0. The
 * issuer keeps a trailing slash, as many providers publish it (DESIGN §10).
 */

export const AUDIENCE = 'https://emapi.test/api';

export interface TokenOptions {
  /** Claims to add or override (`sub`, `roles`, `iss`, `aud`, …); `undefined` removes a claim. */
  claims?: Record<string, unknown>;
  /** Seconds from now; negative for an expired token. Default 300. */
  expiresIn?: number;
  /** Seconds from now before which the token is not valid (`nbf`). */
  notBefore?: number;
  /** Sign with this key instead of the published one (a bad signature under the same `kid`). */
  key?: CryptoKey;
}

export interface IdentityProvider {
  issuer: string;
  jwksUri: string;
  publicJwk: JWK;
  /** The public key as PEM text, what an RS256/HS256 confusion attack signs with. */
  publicKeyPem: string;
  token(options?: TokenOptions): Promise<string>;
  /** Environment for the API in each configuration mode. */
  env: { discovery: Record<string, string>; explicit: Record<string, string> };
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const publicKeyPem = await exportSPKI(publicKey);

  let issuer = '';
  let jwksUri = '';
  const server: Server = createServer((req, res) => {
    const send = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/jwks.json') return send({ keys: [publicJwk] });
    if (req.url === '/.well-known/openid-configuration') {
      return send({ issuer, jwks_uri: jwksUri, id_token_signing_alg_values_supported: ['RS256'] });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuer = `${base}/`;
  jwksUri = `${base}/.well-known/jwks.json`;

  async function token(options: TokenOptions = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: issuer,
      aud: AUDIENCE,
      sub: 'alice',
      iat: now,
      exp: now + (options.expiresIn ?? 300),
      ...(options.notBefore !== undefined ? { nbf: now + options.notBefore } : {}),
      ...options.claims,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(options.key ?? privateKey);
  }

  return {
    issuer,
    jwksUri,
    publicJwk,
    publicKeyPem,
    token,
    env: {
      discovery: { AUTH_ISSUER_BASE_URL: issuer, AUTH_AUDIENCE: AUDIENCE },
      explicit: { AUTH_ISSUER: issuer, AUTH_JWKS_URI: jwksUri, AUTH_AUDIENCE: AUDIENCE },
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `Authorization` header for a token. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
