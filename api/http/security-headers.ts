import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Security headers (helmet's defaults) with a Content-Security-Policy that allows nothing: the API
 * answers JSON, CSV and problem bodies, none of which a browser should run, frame or style.
 */
export function apiSecurityHeaders(): RequestHandler {
  return helmet({
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
  });
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
