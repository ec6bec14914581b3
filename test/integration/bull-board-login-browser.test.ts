import test from 'ava';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { launchBrowser, visibleText, waitForText, watchForErrors } from '../support/browser';
import { startStack, type Stack } from '../support/stack';
import { startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { SESSION_COOKIE } from '../../api/auth/login/bull-board-login';

/**
 * DESIGN §15 in a real headless Chromium: Bull Board behind the OIDC login of a real issuer
 * (oidc-provider and its login page). The issuer is at `localhost`, the API at 127.0.0.1: two
 * sites, so the browser applies SameSite as it would between a real issuer and the API; the
 * session cookie is Strict and still reaches the board after the cross-site way back.
 */

let idp: IdentityProvider;
let issuer: OidcIssuer;
let stack: Stack;
let browser: Browser;
test.before(async () => {
  idp = await startIdentityProvider();
  issuer = await startOidcIssuer();
  stack = await startStack({ workers: [], env: idp.env.discovery, envFor: (origin) => issuer.register(origin) });
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stack?.close();
  await issuer?.close();
  await idp?.close();
});

/** Types a user name into the issuer's login page (its development login takes any password). */
async function logInAtIssuer(page: Page, user: string): Promise<void> {
  await page.waitForSelector('input[name="login"]');
  if (new URL(page.url()).origin !== issuer.url) throw new Error(`not at the issuer: ${page.url()}`);
  await page.type('input[name="login"]', user);
  await page.type('input[name="password"]', 'any password');
  await page.click('button[type="submit"]');
}

/** Statuses of the top-level documents the page loads, in order. */
function documentStatuses(page: Page): { url: string; status: number }[] {
  const seen: { url: string; status: number }[] = [];
  page.on('response', (response: HTTPResponse) => {
    if (response.request().resourceType() === 'document' && response.request().frame() === page.mainFrame()) {
      seen.push({ url: response.url(), status: response.status() });
    }
  });
  return seen;
}

test('the issuer and the API are two sites, as in real life', (t) => {
  t.is(new URL(issuer.url).hostname, 'localhost');
  t.is(new URL(stack.baseUrl).hostname, '127.0.0.1');
});

test('an admin logs in at the issuer, lands on the queue list, logs out; a user is refused with a 403 page', async (t) => {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const problems = watchForErrors(page);
  const documents = documentStatuses(page);

  // Opening the board sends the browser to the issuer's login page.
  await page.goto(`${stack.baseUrl}/admin/queues`);
  await logInAtIssuer(page, 'admin');

  // Back at the board, past the callback, with the queue list rendered by the board's own script.
  await waitForText(page, 'notifications');
  t.is(new URL(page.url()).origin, stack.baseUrl);
  t.regex(new URL(page.url()).pathname, /^\/admin\/queues\/?$/);
  const text = await visibleText(page);
  for (const queue of ['commands', 'views', 'notifications', 'maintenance', 'webhooks'])
    t.true(text.includes(queue), queue);
  t.deepEqual(problems, []);

  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === SESSION_COOKIE);
  t.truthy(session);
  t.like(session, { domain: '127.0.0.1', path: '/admin/queues', httpOnly: true, sameSite: 'Strict', secure: false });
  t.false(
    cookies.some((c) => c.name.startsWith('emapi_') && c.name !== SESSION_COOKIE && c.domain === '127.0.0.1'),
    'the login transaction cookie is gone',
  );

  // Logging out ends the issuer's session as well (it asks first), then shows the logged-out page.
  await page.goto(`${stack.baseUrl}/admin/queues/auth/logout`);
  await page.waitForSelector('button[name="logout"]');
  t.is(new URL(page.url()).origin, issuer.url);
  // The board's page may have polled its API once more while the logout cleared its session: that
  // request's 401 belongs to the page just left (seen once in a full run), not to what follows.
  problems.splice(0, problems.length, ...problems.filter((p) => !/status of 401/.test(p)));
  await Promise.all([page.waitForNavigation(), page.click('button[name="logout"]')]);
  await waitForText(page, 'You are logged out');
  t.is(new URL(page.url()).origin, stack.baseUrl);
  t.false((await context.cookies()).some((c) => c.name === SESSION_COOKIE));
  t.deepEqual(problems, []);

  // Logging in again means the issuer's login page again, not a silent return.
  await Promise.all([page.waitForNavigation(), page.click('#login')]);
  await logInAtIssuer(page, 'user');
  await waitForText(page, 'does not hold the Admin role');
  t.is(new URL(page.url()).origin, stack.baseUrl);
  t.is(documents.at(-1)?.status, 403);
  t.regex(await visibleText(page), /logged in as user/);
  // The only complaint the browser has is the 403 itself.
  t.deepEqual(
    problems.filter((p) => !/status of 403/.test(p)),
    [],
  );
  await context.close();
});
