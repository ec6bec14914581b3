import type { RequestHandler } from 'express';
import cors from 'cors';

/** What a browser script may send: the bearer token, bodies, conditional requests, preferences. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Prefer',
  'Idempotency-Key',
  'X-Request-Id',
  'Last-Event-ID', // GET /Changes resumed by a fetch-based event-stream client
];

/**
 * Response headers a browser script may read beyond the CORS-safelisted ones. Names only, in one
 * string: the error handler alone sets the error headers among them (test/unit/one-error-writer).
 */
const EXPOSED_HEADERS = [
  'Location, ETag, X-Total-Count, X-Total-Count-Limit-Exceeded, Preference-Applied, Link',
  'Retry-After, WWW-Authenticate, X-Request-Id, Content-Disposition',
].join(', ');

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * CORS by configuration (CORS_ORIGINS), with the `cors` package. Mounted before authentication: a
 * browser's preflight (OPTIONS) carries no token, so an allowed origin's preflight is answered here
 * (204). A request from an origin not in the list gets no CORS header at all (its preflight goes on
 * to authentication and fails there), so the browser keeps the answer from the script. No
 * credentials (cookies): callers send bearer tokens. Off (undefined) when no origin is configured.
 */
export function corsPolicy(origins: '*' | readonly string[]): RequestHandler | undefined {
  if (origins !== '*' && origins.length === 0) return undefined;
  const handle = cors({
    // `*` is sent as is; for a list, the caller's Origin is echoed once it is found in the list.
    origin: origins === '*' ? '*' : true,
    methods: METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  if (origins === '*') return handle;
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) return handle(req, res, next);
    // The answer depends on Origin: a cache must not hand this one to an allowed origin (or back).
    res.vary('Origin');
    next();
  };
}
