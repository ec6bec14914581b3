import type { Request, RequestHandler, Response } from 'express';
import * as oidc from 'openid-client';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { BullBoardLoginConfig } from '../../../infra/config/load-config';
import type { Logger } from '../../../infra/logger';
import { POLICY, claimAt, mergeRoles, policyAllows, rolesInClaim } from '../../../domain/auth/roles';
import { DomainError, badRequest, unavailable } from '../../../domain/errors/domain-error';
import type { RoleGrants } from '../role-grants';
import { cookieSeal } from './sealed-cookie';
import { sendContinuePage, sendForbiddenPage, sendLoggedOutPage } from './login-pages';

/**
 * DESIGN §15: Bull Board behind an OIDC login (authorization code + PKCE, openid-client against
 * any issuer found by discovery). Nothing is kept in a process: the login transaction (state,
 * nonce, PKCE verifier) and the session (subject, the roles claim, the ID token for logout) live
 * in encrypted cookies every API process can open.
 *
 * - A request with an Authorization header (or an access_token parameter) passes untouched: the
 *   bearer verifier judges it as everywhere else.
 * - A valid session cookie makes the caller: its subject with the claimed roles plus the service's
 *   grants, looked up per request as for tokens. A browser of a non-Admin gets a 403 page.
 * - A browser request (GET/HEAD, Accept naming text/html) with neither is sent to the issuer.
 * - Anything else passes on without a caller, and gets the 401 problem of today.
 */

export const SESSION_COOKIE = 'emapi_bull_board_session';
export const TRANSACTION_COOKIE = 'emapi_bull_board_login';
/** How long a browser may take at the issuer between leaving and coming back. */
const TRANSACTION_TTL_SECONDS = 600;
/** Browsers keep cookies up to 4096 bytes; an ID token that would push the session past it is left out. */
const MAX_COOKIE_BYTES = 4000;

export interface BullBoardLoginDeps {
  config: BullBoardLoginConfig;
  /** Where Bull Board is mounted (`/admin/queues`); the login's routes live under `<it>/auth`. */
  basePath: string;
  rolesClaim: string;
  grants: RoleGrants;
  logger: Logger;
}

export interface BullBoardLogin {
  /** The login's own routes (open, in the route table). */
  handlers: Record<'bullBoardLoginCallback' | 'bullBoardLogout' | 'bullBoardLoggedOut', RequestHandler>;
  /** Before authentication, on every path under `basePath`: a Bull Board session is a caller of its own. */
  guard: RequestHandler;
  /** Where Bull Board's "Log out" link points. */
  logoutPath: string;
}

export function bullBoardLogin(deps: BullBoardLoginDeps): BullBoardLogin {
  const { config, basePath } = deps;
  const paths = {
    callback: `${basePath}/auth/callback`,
    logout: `${basePath}/auth/logout`,
    loggedOut: `${basePath}/auth/logged-out`,
  };
  const redirectUri = `${config.publicUrl}${paths.callback}`;
  const secure = config.publicUrl.startsWith('https:');
  const sessions = cookieSeal(config.sessionSecret, 'session');
  const transactions = cookieSeal(config.sessionSecret, 'login-transaction');
  const issuer = issuerClient(config, deps.logger);

  /** The session cookie: only ever sent to Bull Board, never on a request another site starts. */
  const sessionCookie = (value: string, maxAge: number) =>
    stringifySetCookie({
      name: SESSION_COOKIE,
      value,
      path: basePath,
      httpOnly: true,
      secure,
      sameSite: 'strict',
      maxAge,
    });
  /**
   * The login transaction: Lax, because the browser must send it on the top-level navigation back
   * from the issuer (another site), which a Strict cookie never rides on. Only the callback sees it.
   */
  const transactionCookie = (value: string, maxAge: number) =>
    stringifySetCookie({
      name: TRANSACTION_COOKIE,
      value,
      path: `${basePath}/auth`,
      httpOnly: true,
      secure,
      sameSite: 'lax',
      maxAge,
    });

  async function startLogin(req: Request, res: Response): Promise<void> {
    const client = await issuer();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const sealed = await transactions.seal(
      { state, nonce, verifier, returnTo: req.originalUrl },
      TRANSACTION_TTL_SECONDS,
    );
    const location = oidc.buildAuthorizationUrl(client, {
      redirect_uri: redirectUri,
      scope: scopesOf(config.scopes),
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    res.append('Set-Cookie', transactionCookie(sealed, TRANSACTION_TTL_SECONDS));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, location.href);
  }

  async function callback(req: Request, res: Response): Promise<void> {
    const params = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const transaction = await transactions.open(cookiesOf(req)[TRANSACTION_COOKIE]);
    // One use only, whatever the outcome.
    res.setHeader('Set-Cookie', transactionCookie('', 0));
    res.setHeader('Cache-Control', 'no-store');
    if (!transaction) {
      throw badRequest(
        `No login is in progress in this browser, or it took longer than ${TRANSACTION_TTL_SECONDS / 60} minutes: open ${basePath} to log in.`,
      );
    }
    const states = params.getAll('state');
    if (states.length !== 1 || states[0] !== transaction.state) {
      throw badRequest(
        `This answer does not belong to the login this browser started (state mismatch): open ${basePath} to log in again.`,
      );
    }
    const refusal = params.get('error');
    if (refusal !== null) {
      const code = /^[A-Za-z0-9_.-]{1,64}$/.test(refusal) ? ` (${refusal})` : '';
      throw badRequest(`The issuer did not log you in${code}: open ${basePath} to try again.`);
    }
    const client = await issuer();
    const tokens = await grantCode(
      client,
      new URL(`${config.publicUrl}${req.originalUrl}`),
      {
        pkceCodeVerifier: String(transaction.verifier),
        expectedState: String(transaction.state),
        expectedNonce: String(transaction.nonce),
        idTokenExpected: true,
      },
      deps.logger,
    );
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string' || claims.sub === '') {
      throw badRequest('The issuer answered without an ID token naming a subject.');
    }
    let roleClaim = claimAt(claims, deps.rolesClaim);
    if (roleClaim === undefined && client.serverMetadata().userinfo_endpoint) {
      const userinfo = await answerOf(oidc.fetchUserInfo(client, tokens.access_token, claims.sub), deps.logger);
      roleClaim = claimAt(userinfo, deps.rolesClaim);
    }
    const roles = rolesInClaim(roleClaim);
    // `op`: a session is good only with the issuer that made it, should the secret outlive a change of issuer.
    const kept = { sub: claims.sub, roles, op: config.issuer };
    let session = await sessions.seal({ ...kept, idt: tokens.id_token }, config.sessionTtlSeconds);
    if (session.length > MAX_COOKIE_BYTES) session = await sessions.seal(kept, config.sessionTtlSeconds);
    res.setHeader('Set-Cookie', [transactionCookie('', 0), sessionCookie(session, config.sessionTtlSeconds)]);
    deps.logger.info({ subject: claims.sub, roles }, 'bull board login');
    const returnTo = String(transaction.returnTo);
    sendContinuePage(res, returnTo.startsWith(basePath) ? returnTo : basePath);
  }

  async function logout(req: Request, res: Response): Promise<void> {
    const session = await sessions.open(cookiesOf(req)[SESSION_COOKIE]);
    res.setHeader('Set-Cookie', sessionCookie('', 0));
    res.setHeader('Cache-Control', 'no-store');
    let client: oidc.Configuration | undefined;
    try {
      client = await issuer();
    } catch {
      client = undefined; // logged out here all the same
    }
    if (!client?.serverMetadata().end_session_endpoint) {
      res.redirect(302, paths.loggedOut);
      return;
    }
    // RP-initiated logout: the issuer ends its own session too, then sends the browser back.
    const idToken = typeof session?.idt === 'string' ? session.idt : undefined;
    const location = oidc.buildEndSessionUrl(client, {
      post_logout_redirect_uri: `${config.publicUrl}${paths.loggedOut}`,
      ...(idToken ? { id_token_hint: idToken } : { client_id: config.clientId }),
    });
    res.redirect(302, location.href);
  }

  const guard: RequestHandler = (req, res, next) => {
    if (req.headers.authorization !== undefined || (req.query as Record<string, unknown>).access_token !== undefined) {
      next();
      return;
    }
    const cookies = cookiesOf(req);
    void sessions
      .open(cookies[SESSION_COOKIE])
      .then(async (session) => {
        const subject = session?.op === config.issuer ? session.sub : undefined;
        if (typeof subject === 'string' && subject !== '') {
          const roles = mergeRoles(rolesInClaim(session?.roles), await deps.grants.rolesOf(subject));
          req.caller = { subject, roles };
          if (!policyAllows(POLICY.adminOnly, roles) && wantsPage(req)) {
            sendForbiddenPage(res, subject, paths.logout);
            return;
          }
          next();
          return;
        }
        // An altered, foreign or expired session counts for nothing; the browser forgets it.
        if (cookies[SESSION_COOKIE] !== undefined) res.append('Set-Cookie', sessionCookie('', 0));
        if (wantsPage(req)) await startLogin(req, res);
        else next();
      })
      .catch(next);
  };

  return {
    handlers: {
      bullBoardLoginCallback: callback,
      bullBoardLogout: logout,
      bullBoardLoggedOut: (_req, res) => sendLoggedOutPage(res, basePath),
    },
    guard,
    logoutPath: paths.logout,
  };
}

/**
 * The bearer verifier for every request but those the Bull Board session already authenticated.
 */
export function unlessSessionCaller(verify: RequestHandler): RequestHandler {
  return (req, res, next) => (req.caller ? next() : verify(req, res, next));
}

/** A person's browser navigating, not a script: only then is a login page any use. */
function wantsPage(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && /\btext\/html\b/i.test(req.headers.accept ?? '');
}

function cookiesOf(req: Request): Record<string, string | undefined> {
  const header = req.headers.cookie;
  return header ? parseCookie(header) : {};
}

function scopesOf(configured: string): string {
  const scopes = new Set(configured.split(/\s+/).filter((scope) => scope !== ''));
  scopes.add('openid');
  return [...scopes].join(' ');
}

/**
 * The issuer's configuration, discovered on first use and kept; a failed discovery is tried again
 * by the next request, so the API starts (and serves everything else) while the issuer is down.
 */
function issuerClient(config: BullBoardLoginConfig, logger: Logger): () => Promise<oidc.Configuration> {
  let discovered: Promise<oidc.Configuration> | undefined;
  return () => {
    discovered ??= oidc
      .discovery(
        new URL(config.issuer),
        config.clientId,
        config.clientSecret ? { client_secret: config.clientSecret } : undefined,
        config.clientSecret ? oidc.ClientSecretBasic(config.clientSecret) : oidc.None(),
        {
          timeout: 10,
          ...(config.issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      )
      .catch((err: unknown) => {
        discovered = undefined;
        logger.warn({ err: messageOf(err), issuer: config.issuer }, 'bull board login: issuer discovery failed');
        throw issuerUnavailable();
      });
    return discovered;
  };
}

function grantCode(
  client: oidc.Configuration,
  currentUrl: URL,
  checks: oidc.AuthorizationCodeGrantChecks,
  log: Logger,
): ReturnType<typeof oidc.authorizationCodeGrant> {
  return answerOf(oidc.authorizationCodeGrant(client, currentUrl, checks), log);
}

/**
 * What a failed exchange with the issuer tells the browser: a 400 when the answer it brought back
 * or the issuer's reply to it does not hold (a forged, reused or mangled code, a wrong `iss`), a
 * 503 when the issuer cannot be reached or fails itself. The library's messages go to no client.
 */
async function answerOf<T>(pending: Promise<T>, log: Logger): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if (err instanceof oidc.ResponseBodyError && err.status < 500) {
      throw badRequest(
        `The issuer refused to complete the login (${safeCode(err.error)}): open the board again to log in.`,
      );
    }
    if (err instanceof oidc.AuthorizationResponseError) {
      throw badRequest(`The issuer did not log you in (${safeCode(err.error)}).`);
    }
    if (err instanceof oidc.ClientError && !isNetworkFailure(err)) {
      throw badRequest('The answer of the issuer could not be verified: open the board again to log in.');
    }
    log.warn({ err: messageOf(err) }, 'bull board login: the issuer failed');
    throw issuerUnavailable();
  }
}

function safeCode(code: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'error';
}

function isNetworkFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof oidc.ResponseBodyError && e.status >= 500) return true;
    if (e.name === 'TypeError' || e.name === 'AbortError' || e.name === 'TimeoutError') return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true;
  }
  return false;
}

function messageOf(err: unknown): string {
  return err instanceof Error
    ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
    : String(err);
}

function issuerUnavailable(): DomainError {
  return unavailable('The identity provider of the Bull Board login cannot be reached right now; try again shortly.');
}
