import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * Security headers (helmet's defaults) with a Content-Security-Policy that allows nothing: the API
 * answers JSON, CSV and problem bodies, none of which a browser should run, frame or style.
 */
export function apiSecurityHeaders(): RequestHandler {
  return constantHeaders(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'none'"],
          frameAncestors: ["'none'"],
        },
      },
      frameguard: { action: 'deny' },
    }),
  );
}

/**
 * The headers a middleware that sets the same headers on every request sets, found once by running
 * it against a recording response, then set by one function: helmet's chain of twelve middlewares
 * per request was measurable on a keyed GET. Throws if the middleware does anything else.
 */
function constantHeaders(middleware: RequestHandler): RequestHandler {
  const set: [string, string][] = [];
  const removed: string[] = [];
  let passed = false;
  const recorder = {
    setHeader: (name: string, value: string) => set.push([name, value]),
    removeHeader: (name: string) => removed.push(name),
  };
  void middleware({} as Request, recorder as unknown as Response, (err?: unknown) => {
    if (err) throw err as Error;
    passed = true;
  });
  if (!passed) throw new Error('the security headers middleware did not pass the request on synchronously');
  return (_req, res, next) => {
    for (const name of removed) res.removeHeader(name);
    for (const [name, value] of set) res.setHeader(name, value);
    next();
  };
}

/**
 * The policy for Bull Board's page: its scripts and stylesheet are served from its own static path;
 * its loading screen uses inline styles; nothing is loaded from outside the service (its Google Fonts
 * link is removed, api/jobs/bull-board.ts). No inline script runs:
 * its one inline <script> is a JSON data block, which CSP does not execute.
 */
export function bullBoardSecurityHeaders(): RequestHandler {
  return helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      fontSrc: ["'self'", 'data:'],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  });
}
