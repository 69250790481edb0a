// The browser of the browser tests: Debian's Chromium (`apt-get install chromium`, as .ci/run does),
// or the one CHROMIUM_PATH names, driven headless by playwright-core, which downloads no browser.
// Every response of the service that the page receives is checked against the contract, as the
// tests' own requests are.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { checkResponse } from './contract.js';

const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium to run, or null when none is installed. */
export const chromiumPath: string | null = candidates.find((p): p is string => Boolean(p && existsSync(p))) ?? null;

export const noBrowserMessage = 'no Chromium: install it (apt-get install chromium) or set CHROMIUM_PATH; the browser tests are skipped';

export function launchBrowser(): Promise<Browser> {
  if (!chromiumPath) throw new Error(noBrowserMessage);
  // As root (CI), Chromium runs only without its sandbox.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Checks every answer of `serviceUrl` the page gets; `settle()` waits for the checks and throws the first violation. */
export function checkPageResponses(page: Page, serviceUrl: string): { settle(): Promise<void> } {
  const checks: Promise<void>[] = [];
  page.on('response', (response) => {
    if (!response.url().startsWith(`${serviceUrl}/api/`)) return;
    checks.push(
      (async () => {
        const contentType = (await response.headerValue('content-type')) ?? null;
        // A search the page abandoned (a newer key stroke) has no body to check.
        const text = await response.text().catch(() => null);
        if (text === null) return;
        const body = text && contentType?.includes('json') ? JSON.parse(text) : text || undefined;
        checkResponse(response.request().method(), response.url(), response.status(), body, contentType);
      })(),
    );
  });
  return {
    async settle() {
      await Promise.all(checks);
    },
  };
}
