import test from 'ava';
import { launchBrowser, visibleText, waitForText, watchForErrors } from '../support/browser';
import { startStack, type Stack } from '../support/stack';

/** `GET /docs` in a real headless Chromium (DESIGN §15): it renders the document, all from here. */

let stack: Stack;
test.before(async () => {
  stack = await startStack({ workers: [] });
});
test.after.always(async () => stack?.close());

interface Document {
  tags: { name: string }[];
  paths: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
}

test('/docs lists every resource of /openapi.json and, opened, every Schemes operation; no console error, nothing from elsewhere', async (t) => {
  const document = (await stack.get('/openapi.json')).body as Document;
  const schemeOperations = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.tags?.includes('Schemes'))
      .map(([method, operation]) => ({ path, method: method.toUpperCase(), summary: operation.summary ?? '' })),
  );
  t.true(schemeOperations.length >= 7, 'list, count, create, read, replace, patch, delete');

  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const problems = watchForErrors(page);
    const elsewhere: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${stack.baseUrl}/`) && !url.startsWith('data:')) elsewhere.push(url);
    });
    const response = await page.goto(`${stack.baseUrl}/docs`, { waitUntil: 'networkidle0' });
    t.is(response?.status(), 200);
    // Rendered by Swagger UI's own script from the document it fetched: every tag, folded.
    await waitForText(page, 'Schemes');
    for (const { name } of document.tags) t.truthy(await page.$(`#operations-tag-${name}`), name);
    await page.click('#operations-tag-Schemes');
    for (const { path, method, summary } of schemeOperations) {
      await waitForText(page, summary, 10_000).catch(() => undefined);
      t.true((await visibleText(page)).includes(summary), `${method} ${path}: ${summary}`);
    }
    t.true((await visibleText(page)).includes('Entity Management API'));
    t.deepEqual(problems, []);
    t.deepEqual(elsewhere, []);
  } finally {
    await browser.close();
  }
});
