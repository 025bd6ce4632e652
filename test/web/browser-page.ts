/** A headless Chromium page for the dashboard tests (the machine's Chromium, or WEIR_CHROMIUM), collecting console errors. */
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.WEIR_CHROMIUM ?? '/usr/bin/chromium';

export interface BrowserPage {
  readonly browser: Browser;
  readonly page: Page;
  /** Errors the page logged or threw, in order. */
  readonly consoleErrors: string[];
}

export async function openBrowserPage(): Promise<BrowserPage> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  return { browser, page, consoleErrors };
}
