/**
 * The page of `GET /docs`: Swagger UI's bundle and stylesheet from this service (swagger-ui-dist),
 * started by a script file of its own (no inline script, so the CSP needs no 'unsafe-inline' for
 * scripts). The validator badge is off: it would send the document to validator.swagger.io.
 */

/** The files of swagger-ui-dist the page loads; nothing else of the package is served. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];

/** The page's own script, beside the package's files under /docs/. */
export const DOCS_INIT_FILE = 'docs-init.js';

export const DOCS_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Entity Management API: reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/${DOCS_INIT_FILE}"></script>
  </body>
</html>
`;

export const DOCS_INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;
