import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * A real, standard OpenID Provider for the Bull Board login tests: oidc-provider (OpenID certified)
 * with its development login page, where any user name logs in. The users "admin" and "user" hold
 * the roles Admin and User in the `roles` claim, which the provider puts into the ID token; any
 * other name holds none. It listens at `http://localhost:<port>` while the API under test listens
 * at 127.0.0.1: two sites, as an issuer and an API are in real life, so SameSite rules apply as
 * they would there (one host with two ports is one site and would hide them).
 *
 * The API's origin is known only once its server listens, and the API must know the issuer first:
 * so the issuer listens at once and its provider is built by `register(apiOrigin)`, before any
 * request reaches it.
 */

export const CLIENT_ID = 'bull-board';
export const CONFIDENTIAL_CLIENT_ID = 'bull-board-confidential';
export const CONFIDENTIAL_CLIENT_SECRET = 'a-client-secret-of-the-confidential-client';
export const SESSION_SECRET = 'the-test-session-secret-of-bull-board-0123456789';

const ROLES: Record<string, string[]> = { admin: ['Admin'], user: ['User'] };

export interface OidcIssuer {
  /** `http://localhost:<port>`, the issuer identifier. */
  url: string;
  /** Builds the provider with the clients of the API at `apiOrigin`; returns the API's login settings. */
  register(apiOrigin: string, options?: { confidential?: boolean }): Record<string, string>;
  close(): Promise<void>;
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'issuer-key-1', alg: 'RS256', use: 'sig' };
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handle) handle(req, res);
    else res.writeHead(503).end('issuer not configured yet');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;

  function register(apiOrigin: string, options: { confidential?: boolean } = {}): Record<string, string> {
    const redirectUri = `${apiOrigin}/admin/queues/auth/callback`;
    const loggedOutUri = `${apiOrigin}/admin/queues/auth/logged-out`;
    const client = {
      redirect_uris: [redirectUri],
      post_logout_redirect_uris: [loggedOutUri],
      grant_types: ['authorization_code'],
      response_types: ['code' as const],
    };
    const configuration: Configuration = {
      clients: [
        { ...client, client_id: CLIENT_ID, token_endpoint_auth_method: 'none' },
        {
          ...client,
          client_id: CONFIDENTIAL_CLIENT_ID,
          client_secret: CONFIDENTIAL_CLIENT_SECRET,
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [signingKey] },
      cookies: { keys: ['issuer-cookie-key-for-tests-only'] },
      claims: { openid: ['sub'], profile: ['name'], roles: ['roles'] },
      scopes: ['openid', 'profile', 'roles', 'offline_access'],
      // The roles claim in the ID token itself, as issuers configured for role-based apps put it.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      pkce: { required: () => true },
      findAccount: (_ctx, id) => ({
        accountId: id,
        claims: () => ({ sub: id, name: id, ...(ROLES[id] ? { roles: ROLES[id] } : {}) }),
      }),
      // No consent screen: the test client is first-party, every scope it asks for is granted.
      loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
        const clientId = ctx.oidc.client!.clientId;
        const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(clientId);
        if (grantId) return ctx.oidc.provider.Grant.find(grantId);
        const grant = new ctx.oidc.provider.Grant({ clientId, accountId: ctx.oidc.session!.accountId! });
        grant.addOIDCScope('openid profile roles');
        grant.addOIDCClaims(['roles', 'name']);
        await grant.save();
        return grant;
      },
    };
    const provider = new Provider(url, configuration);
    handle = provider.callback();
    return {
      BULL_BOARD_OIDC_ISSUER: url,
      BULL_BOARD_OIDC_CLIENT_ID: options.confidential ? CONFIDENTIAL_CLIENT_ID : CLIENT_ID,
      ...(options.confidential ? { BULL_BOARD_OIDC_CLIENT_SECRET: CONFIDENTIAL_CLIENT_SECRET } : {}),
      BULL_BOARD_OIDC_SCOPES: 'openid profile roles',
      BULL_BOARD_PUBLIC_URL: apiOrigin,
      BULL_BOARD_SESSION_SECRET: SESSION_SECRET,
    };
  }

  return {
    url,
    register,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
