/** A headless Chromium page for the dashboard tests (the machine's Chromium, or WEIR_CHROMIUM), collecting console errors. */
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium } from '../support/chromium.ts';

const CHROMIUM = findChromium();
/** No browser and CI does not require one: the browser tests skip, after one line naming the fix. */
export const BROWSER_SKIPPED = !CHROMIUM.found && !CHROMIUM.required;
if (!CHROMIUM.found) process.stderr.write(`${CHROMIUM.missingLine}\n`);

export interface BrowserPage {
  readonly browser: Browser;
  readonly page: Page;
  /** Errors the page logged or threw, in order. */
  readonly consoleErrors: string[];
}

export async function openBrowserPage(): Promise<BrowserPage> {
  const browser = await chromium.launch({ executablePath: CHROMIUM.path, headless: true, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  return { browser, page, consoleErrors };
}

/** Fails the suite at once when CI requires the browser tests and there is no browser. */
export function assertBrowser(): void {
  if (!CHROMIUM.found) throw new Error(CHROMIUM.missingLine);
}
