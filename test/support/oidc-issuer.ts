import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * A real, standard OpenID Provider for the Bull Board login tests: oidc-provider (OpenID certified)
 * with a minimal login page of its own (oidc-provider's interaction API), where a user name typed
 * logs in; its pages load nothing from elsewhere, so a browser test sees every console error. The users "admin" and "user" hold
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

export interface RegisterOptions {
  /** The API logs in as a confidential client (client_secret_basic) rather than a public one. */
  confidential?: boolean;
  /** The roles claim only in userinfo, not in the ID token (the OIDC default for the code flow). */
  rolesInUserinfo?: boolean;
}

export interface OidcIssuer {
  /** `http://localhost:<port>`, the issuer identifier. */
  url: string;
  /** Builds the provider with the clients of the API at `apiOrigin`; returns the API's login settings. */
  register(apiOrigin: string, options?: RegisterOptions): Record<string, string>;
  close(): Promise<void>;
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'issuer-key-1', alg: 'RS256', use: 'sig' };
  let provider: Provider | undefined;
  const server: Server = createServer((req, res) => {
    if (!provider) res.writeHead(503).end('issuer not configured yet');
    else if (req.url?.startsWith('/interaction/'))
      interaction(provider, req, res).catch(() => res.writeHead(400).end());
    else provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;

  function register(apiOrigin: string, options: RegisterOptions = {}): Record<string, string> {
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
      conformIdTokenClaims: options.rolesInUserinfo === true,
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: (ctx, form) => {
            ctx.body = issuerPage(
              'Log out',
              `${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, log me out</button>`,
            );
          },
        },
      },
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
    provider = new Provider(url, configuration);
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

function issuerPage(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
}

/** The login prompt: a form for a user name (and a password nobody checks). */
async function interaction(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      issuerPage(
        'Sign in',
        `<form method="post" action="/interaction/${details.uid}"><input name="login" required><input name="password" type="password" required><button type="submit">Sign in</button></form>`,
      ),
    );
    return;
  }
  let body = '';
  for await (const chunk of req) body += String(chunk);
  const login = new URLSearchParams(body).get('login') ?? '';
  await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}
