import type { Response } from 'express';

/**
 * The few HTML pages of the Bull Board login: what a browser is shown where a JSON problem would
 * mean nothing to a person. No script, no style (the API's Content-Security-Policy allows none);
 * every value placed in them is escaped.
 */

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${head}</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

function send(res: Response, status: number, html: string): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(html);
}

/**
 * The callback's answer: a same-origin page that moves on to Bull Board itself. A redirect would
 * stay in the navigation that began at the issuer, a cross-site chain in which the browser does not
 * send the SameSite=Strict session cookie just set; a navigation this page starts is same-site.
 */
export function sendContinuePage(res: Response, target: string): void {
  const href = escapeHtml(target);
  send(
    res,
    200,
    page(
      'Logged in',
      `<p><a id="continue" href="${href}">Continue to Bull Board</a></p>`,
      `<meta http-equiv="refresh" content="0;url=${href}">`,
    ),
  );
}

/** A logged-in caller without the Admin role. */
export function sendForbiddenPage(res: Response, subject: string, logoutUrl: string): void {
  send(
    res,
    403,
    page(
      'Forbidden',
      `<p id="reason">You are logged in as <strong>${escapeHtml(subject)}</strong>, who does not hold the Admin role. Bull Board is open to admins only.</p>
<p><a id="logout" href="${escapeHtml(logoutUrl)}">Log out</a> to log in as someone else.</p>`,
    ),
  );
}

export function sendLoggedOutPage(res: Response, loginUrl: string): void {
  send(
    res,
    200,
    page(
      'Logged out',
      `<p>You are logged out of Bull Board.</p>
<p><a id="login" href="${escapeHtml(loginUrl)}">Log in again</a></p>`,
    ),
  );
}
