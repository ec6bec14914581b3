import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * A real headless Chromium (Debian's package, which `npm test` installs when missing) for the
 * browser checks: the docs page and the Bull Board login. CHROMIUM_PATH points elsewhere.
 */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`no Chromium at ${path}: run the suite with \`npm test\`, which installs it`);
  return path;
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // As root in a container: no sandbox, and /dev/shm is often too small for Chromium's default.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
  });
}

/** The page's visible text (the suite compiles without the DOM library, hence the expression). */
export async function visibleText(page: Page): Promise<string> {
  return (await page.evaluate('document.body.innerText')) as string;
}

/** Waits until the page's visible text contains `text` (rendered by the page's own scripts). */
export async function waitForText(page: Page, text: string, timeout = 15_000): Promise<void> {
  await page.waitForFunction(`document.body && document.body.innerText.includes(${JSON.stringify(text)})`, {
    timeout,
  });
}

/**
 * Collects what a page must never show: console errors, uncaught exceptions and failed loads (an
 * asset the CSP blocks or the network cannot reach shows up here).
 */
export function watchForErrors(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page: ${String(error)}`));
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`),
  );
  return problems;
}
