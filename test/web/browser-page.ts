/** A headless Chromium page for the dashboard tests (the machine's Chromium, or WEIR_CHROMIUM), collecting console errors. */
import { type Browser, chromium, type Page } from 'playwright-core';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { findChromium } from '../support/chromium.ts';
import { type RunningWebJob, startWebJob, type WebJobOptions } from '../support/web-job.ts';

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

/** A running web job, its web server and a Chromium page: what a dashboard test drives. */
export interface DashboardSession extends BrowserPage {
  readonly job: RunningWebJob;
  readonly server: WebServer;
  /** Closes the browser, cancels the job and stops its server. */
  close(): Promise<void>;
}

/** Starts a web job with `options`, its web server (sampling every `sampleIntervalMs`) and a browser page. */
export async function openDashboardSession(options: WebJobOptions, token: string, sampleIntervalMs: number): Promise<DashboardSession> {
  const job = await startWebJob(options);
  const server = await startWebServer({ client: job.client, master: job.master, token, sampleIntervalMs });
  const browser = await openBrowserPage();
  return {
    ...browser,
    job,
    server,
    close: async () => {
      await browser.browser.close();
      await job.client.cancel();
      await server.close();
    },
  };
}
