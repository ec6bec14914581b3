import test from 'ava';
import { startStack, type Stack } from '../support/stack';

/**
 * `GET /openapi.json` and `GET /docs` (DESIGN §15): open without a token, the document with an
 * ETag, the page and every asset it loads served by the service itself (no CDN, no web fonts),
 * under a CSP relaxed for /docs only. (That the page renders without console errors is the
 * headless-browser test's.)
 */

let stack: Stack;
test.before(async () => {
  // Real authentication: the two routes must answer without any token.
  stack = await startStack({
    workers: [],
    env: {
      AUTH_SECRET: 'a-local-secret-of-more-than-32-bytes!',
      AUTH_ISSUER: 'http://localhost/',
      AUTH_AUDIENCE: 'emapi-local',
    },
  });
});
test.after.always(async () => {
  await stack?.close();
});

test('/openapi.json answers without a token, with an ETag that a revalidation matches', async (t) => {
  const res = await stack.get('/openapi.json');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /^application\/json/);
  const doc = res.body as { openapi: string; paths: Record<string, unknown> };
  t.is(doc.openapi, '3.1.0');
  t.truthy(doc.paths['/Schemes/{key}']);
  const etag = res.headers.get('etag')!;
  t.regex(etag, /^"[A-Za-z0-9_-]+"$/);
  const again = await stack.get('/openapi.json', { 'if-none-match': etag });
  t.is(again.status, 304);
  t.is(again.text, '');
  t.is((await stack.get('/openapi.json', { 'if-none-match': '"other"' })).status, 200);
  // Entity routes still want a token.
  t.is((await stack.get('/Schemes')).status, 401);
});

test('/openapi.json?flat=true answers the flat form, with its own ETag; a flat that is not a boolean is a 400', async (t) => {
  const nested = await stack.get('/openapi.json');
  const flat = await stack.get('/openapi.json?flat=true');
  t.is(flat.status, 200);
  const schemas = (flat.body as { components: { schemas: Record<string, unknown> } }).components.schemas;
  t.truthy(schemas.RelatedEntity);
  t.falsy((nested.body as { components: { schemas: Record<string, unknown> } }).components.schemas.RelatedEntity);
  t.not(flat.headers.get('etag'), nested.headers.get('etag'));
  t.is((await stack.get('/openapi.json?flat=true', { 'if-none-match': flat.headers.get('etag')! })).status, 304);
  t.is((await stack.get('/openapi.json?flat=false')).headers.get('etag'), nested.headers.get('etag'));
  const bad = await stack.get('/openapi.json?flat=yes');
  t.is(bad.status, 400);
  t.like(bad.body as object, { title: 'Bad Request', detail: "Query option 'flat' must be true or false." });
});

test('/docs and every asset it loads answer 200 from the service, with their types and no external URL', async (t) => {
  const page = await stack.get('/docs');
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type')!, /^text\/html/);
  const urls = [...page.text.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  t.true(urls.length >= 3, page.text);
  for (const url of urls) t.regex(url, /^\/docs\/[\w.-]+$/, `a local asset: ${url}`);
  t.notRegex(page.text, /https?:\/\/|\/\/[a-z]/i, 'no external URL in the page');
  // No inline script: every <script> has a src.
  t.deepEqual([...page.text.matchAll(/<script(?![^>]*\ssrc=)[^>]*>/g)], []);

  const types: Record<string, RegExp> = {
    js: /^(text|application)\/javascript/,
    css: /^text\/css/,
    png: /^image\/png/,
  };
  for (const url of urls) {
    const asset = await stack.get(url);
    t.is(asset.status, 200, url);
    t.regex(asset.headers.get('content-type')!, types[url.split('.').pop()!]!, url);
    if (url.endsWith('.css')) {
      // Images are data: URLs; no font or stylesheet is fetched from elsewhere.
      t.notRegex(asset.text, /@import|url\(\s*["']?(https?:)?\/\//, url);
    }
  }
  const init = await stack.get('/docs/docs-init.js');
  t.regex(init.text, /url: '\/openapi\.json'/);
  t.regex(init.text, /validatorUrl: null/);
  // Nothing else of the package is served.
  t.not((await stack.get('/docs/swagger-initializer.js')).status, 200);
});

test('the CSP is relaxed for /docs only, and only for its own scripts, styles and images', async (t) => {
  const csp = (await stack.get('/docs')).headers.get('content-security-policy')!;
  t.regex(csp, /script-src 'self'(;|$)/);
  t.notRegex(csp, /unsafe-eval|script-src[^;]*unsafe-inline/);
  t.regex(csp, /connect-src 'self'/);
  t.notRegex(csp, /https?:/);
  const api = (await stack.get('/openapi.json')).headers.get('content-security-policy')!;
  t.regex(api, /default-src 'none'/);
  t.notRegex(api, /script-src/);
});
