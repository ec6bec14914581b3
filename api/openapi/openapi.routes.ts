import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { badRequest } from '../../domain/errors/domain-error';
import { buildOpenApiDocument, type DocumentSettings } from './document';
import type { SchemaForm } from './schemas';
import { DOCS_ASSETS, DOCS_HTML, DOCS_INIT_FILE, DOCS_INIT_SCRIPT } from './docs-page';

/**
 * `GET /openapi.json` and `GET /docs` (DESIGN §15), open without a token like `/health`. The
 * document is generated once per process and settings and answered with an ETag; `/docs` is
 * Swagger UI (swagger-ui-dist), every asset served from here, under a CSP relaxed for this page only.
 */

interface Built {
  text: string;
  etag: string;
}

const built = new Map<string, Built>();

/** The document as served: built once per process (and settings and form), with its entity tag. */
export function openApiDocument(settings: DocumentSettings, form: SchemaForm = 'nested'): Built {
  const key = `${form} ${JSON.stringify(settings)}`;
  let doc = built.get(key);
  if (!doc) {
    const text = JSON.stringify(buildOpenApiDocument(settings, form));
    doc = { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` };
    built.set(key, doc);
  }
  return doc;
}

function swaggerUiDir(): string {
  return join(require.resolve('swagger-ui-dist/package.json'), '..');
}

/**
 * Swagger UI renders with React: its scripts are files ('self'), but it sets style attributes and
 * its stylesheet embeds SVG icons as data: URLs. It fetches only /openapi.json and, with "Try it
 * out", the service itself.
 */
function docsSecurityHeaders() {
  return helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      baseUri: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
    },
  });
}

/** The handlers of `/openapi.json`, `/docs` and `/docs/{asset}` (api/routes/route-table.ts). */
export function openApiHandlers(settings: DocumentSettings): {
  openApiDocument: RequestHandler;
  docsPage: RequestHandler[];
  docsAsset: RequestHandler[];
} {
  const nested = openApiDocument(settings);

  const serveDocument: RequestHandler = (req: Request, res: Response) => {
    const flat = req.query.flat;
    if (flat !== undefined && flat !== 'true' && flat !== 'false') {
      throw badRequest("Query option 'flat' must be true or false.");
    }
    // The flat form is built on its first request: most processes never serve it.
    const doc = flat === 'true' ? openApiDocument(settings, 'flat') : nested;
    res.setHeader('ETag', doc.etag);
    res.setHeader('Cache-Control', 'no-cache');
    const held = req.get('if-none-match');
    if (
      held !== undefined &&
      (held.trim() === '*' || held.split(',').some((tag) => tag.trim().replace(/^W\//, '') === doc.etag))
    ) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(doc.text);
  };

  const csp = docsSecurityHeaders();
  const dir = swaggerUiDir();
  const assets = new Set<string>([...DOCS_ASSETS, DOCS_INIT_FILE]);
  return {
    openApiDocument: serveDocument,
    // `/docs/` and `/docs` alike; relative asset URLs are written absolute in the page.
    docsPage: [csp, (_req: Request, res: Response) => void res.type('text/html').send(DOCS_HTML)],
    docsAsset: [
      // Any other name is none of the page's files: it is left to the authenticated routes (a 401 or 404).
      (req, _res, next) => next(assets.has(req.params.asset as string) ? undefined : 'route'),
      csp,
      (req: Request, res: Response, next) => {
        const asset = req.params.asset as string;
        if (asset === DOCS_INIT_FILE) return void res.type('text/javascript').send(DOCS_INIT_SCRIPT);
        res.sendFile(join(dir, asset), { maxAge: '1d' }, (err) => {
          if (err) next(err);
        });
      },
    ],
  };
}
