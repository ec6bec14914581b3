import test from 'ava';
import { launchBrowser, visibleText, waitForText, watchForErrors } from '../support/browser';
import { startStack, type Stack } from '../support/stack';

let stack: Stack;
test.before(async () => {
  stack = await startStack({ env: { AUTH_MOCK_ROLE: 'Admin' } });
});
test.after.always(async () => stack?.close());

test('Bull Board renders its queue list in a real browser under the service’s CSP, with no console error', async (t) => {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const problems = watchForErrors(page);
    const response = await page.goto(`${stack.baseUrl}/admin/queues`, { waitUntil: 'networkidle0' });
    t.is(response?.status(), 200);
    // The board's own queue list, rendered by its script from its API: every queue by name.
    await waitForText(page, 'notifications');
    const text = await visibleText(page);
    for (const queue of ['commands', 'views', 'notifications', 'maintenance', 'webhooks'])
      t.true(text.includes(queue), queue);
    t.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
