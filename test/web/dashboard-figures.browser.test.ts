/**
 * What the dashboard shows must not read as loss or lies, in a real browser:
 * records over every attempt after a restart, a checkpoint without a trace offers no replay, the
 * replay's title names the checkpoint chosen, vertices by name, long names fitting their boxes,
 * configuration values with units, discarded checkpoints marked, and an ended job's clock stopped.
 * Screenshots go to test-results/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Flow } from '../../src/web/rest/responses.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { assertBrowser, BROWSER_SKIPPED, openBrowserPage } from './browser-page.ts';
import { tempDir } from '../support/jobs.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { until, webClient } from './web-client.ts';

const ARTEFACTS = path.resolve('test-results');
const LONG = 'match every order with its payment and enrich it with the customer record';
const FULL_NAME = `${LONG} -> collect`;

/** Resolves once `read` gives `want` (polls: the page's CSP forbids evaluated strings). */
async function settled<T>(read: () => Promise<T>, want: (x: T) => boolean): Promise<T> {
  for (;;) {
    const x = await read();
    if (want(x)) return x;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The on-page box of `locator`, retried: live updates redraw the graph, detaching the element measured. */
function boxOf(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  return settled(
    () => locator.boundingBox(),
    (b) => b !== null,
  ) as Promise<{ x: number; y: number; width: number; height: number }>;
}

describe.skipIf(BROWSER_SKIPPED)('dashboard figures in Chromium', () => {
  let job: RunningWebJob;
  let server: WebServer;
  let browser: Browser;
  let page: Page;
  let rest: ReturnType<typeof webClient>;
  let jid: string;
  let ids: number[];
  let consoleErrors: string[];

  beforeAll(async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    job = await startWebJob({ parallelism: 2, throwAtRecord: 30, matchName: LONG, checkpointStorage: tempDir('weir-dash-figures-') });
    server = await startWebServer({ client: job.client, master: job.master, token: 'figures-token', sampleIntervalMs: 100 });
    rest = webClient(server.address, '');
    jid = job.client.jobId;
    await job.client.triggerCheckpoint(); // the restart replays everything after it
    job.gate.allowUpTo(200);
    await until(
      () => rest.get(`/jobs/${jid}`),
      (r) => r.body.restarts === 1 && r.body['records-in-attempt'] === 800 && r.body.vertices[2].metrics['read-records-attempt'] === 800,
    );
    // 3 retained + 5 newest finished keep their trace: of 10, the oldest two lose it, all but the newest 3 are discarded.
    for (let i = 0; i < 9; i++) await job.client.triggerCheckpoint();
    ids = (await rest.get(`/jobs/${jid}/checkpoints`)).body.history.map((h: { id: number }) => h.id);
    ({ browser, page, consoleErrors } = await openBrowserPage());
  });
  afterAll(async () => {
    await browser?.close();
    await job?.client.cancel();
    await server?.close();
  });

  it('the overview counts records over every attempt, this attempt beside them; a long name fits its box', async () => {
    await page.goto(`${server.address}/`);
    await page.locator('#job-figures tbody td').first().waitFor();
    const d = (await rest.get(`/jobs/${jid}`)).body;
    expect(d['records-in']).toBeGreaterThan(800);
    const headers = await page.locator('#job-figures th').allTextContents();
    const cells = await page.locator('#job-figures tbody td').allTextContents();
    const cell = (h: string) => cells[headers.indexOf(h)];
    expect(cell('records in (all attempts)')).toBe(d['records-in'].toLocaleString('en-US'));
    expect(cell('records out (all attempts)')).toBe(d['records-out'].toLocaleString('en-US'));
    expect(cell('this attempt: in / out')).toBe(`800 / ${d['records-out-attempt'].toLocaleString('en-US')}`);
    const name = page.locator('#job-graph .vertex[data-vertex="2"] .vertex-name');
    expect(await name.getAttribute('data-full-name')).toBe(FULL_NAME);
    expect(await name.locator('title').textContent()).toBe(FULL_NAME);
    expect(await name.evaluate((e) => e.childNodes[0]?.textContent)).toMatch(/^match every .*…$/);
    const box = await boxOf(page.locator('#job-graph .vertex[data-vertex="2"] rect'));
    const text = await boxOf(name);
    expect(box.width).toBeGreaterThan(150);
    expect(text.x + text.width).toBeLessThanOrEqual(box.x + box.width);
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-figures-overview.png'), fullPage: true });
  });

  it('checkpoints: no replay for one without a trace, discarded ones marked, the drill-down by vertex name', async () => {
    await page.click('a[data-tab="checkpoints"]');
    const oldest = ids.at(-1)!;
    const newest = ids[0]!;
    const row = (id: number) => page.locator(`#checkpoint-history tr[data-checkpoint="${id}"]`);
    await row(oldest).waitFor();
    expect(await row(oldest).locator('button.flow-button').count()).toBe(0);
    expect(await row(oldest).locator('.not-traced').textContent()).toBe('not traced');
    expect(await row(newest).locator('button.flow-button').count()).toBe(1);
    expect(await row(oldest).locator('.discarded').textContent()).toBe('(discarded)');
    expect(await row(newest).locator('.discarded').count()).toBe(0);
    await row(oldest).click();
    const title = await settled(
      () => page.locator('#checkpoint-title').textContent(),
      (t) => t?.startsWith(`Checkpoint ${oldest}:`) === true,
    );
    expect(title).toContain('discarded');
    expect(title).not.toContain(' at /');
    expect(await page.locator('#vertex-details button.vertex-button').allTextContents()).toEqual(['orders', 'payments', FULL_NAME]);
    await page.click('#vertex-details button[data-vertex="0"]');
    expect(await page.locator('#subtask-details h4').textContent()).toBe('orders, per subtask');
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-figures-checkpoints.png'), fullPage: true });
  });

  it('the replay of a checkpoint without a trace says so; the title names the checkpoint the picker shows', async () => {
    const oldest = ids.at(-1)!;
    await page.goto(`${server.address}/#flow/${oldest}`);
    await page.locator('#flow-not-traced').waitFor();
    expect(await page.inputValue('#flow-checkpoint')).toBe(String(oldest));
    expect(await page.locator('#flow-title').textContent()).toBe(`Barrier flow of checkpoint ${oldest}: not traced`);
    expect(await page.locator('#flow-svg').count()).toBe(0);
    // Live updates keep the choice in the picker.
    const updates = Number(await page.locator('body').getAttribute('data-updates'));
    await settled(
      () => page.locator('body').getAttribute('data-updates'),
      (n) => Number(n) >= updates + 2,
    );
    expect(await page.inputValue('#flow-checkpoint')).toBe(String(oldest));
    const traced = ids[1]!;
    await page.selectOption('#flow-checkpoint', String(traced));
    await page.locator('#flow-svg').waitFor();
    expect(await page.locator('#flow-title').textContent()).toMatch(new RegExp(`^Barrier flow of checkpoint ${traced} \\(aligned\\): COMPLETED$`));
    expect(await page.inputValue('#flow-checkpoint')).toBe(String(traced));
  });

  it('the replay names subtasks by vertex name, fits long names, and steps one event at a time', async () => {
    const traced = ids[1]!;
    const flow = (await rest.get(`/jobs/${jid}/checkpoints/details/${traced}/flow`)).body as Flow;
    await page.selectOption('#flow-speed', '1000');
    await page.locator(`#flow-svg[data-checkpoint="${traced}"][data-finished="true"]`).waitFor();
    const barrier = await page.locator('#flow-log li[data-type="barrier"]').first().textContent();
    expect(barrier).toMatch(/barrier (orders|payments)#\d → match every .*#\d/);
    for (const li of await page.locator('#flow-log li').allTextContents()) expect(li).not.toMatch(/(^|[\s>])\d+#\d/); // no bare vertex ids
    const label = page.locator('#flow-svg .subtask[data-subtask="2/0"] text');
    expect(await label.getAttribute('data-full-name')).toBe(FULL_NAME);
    expect(await label.evaluate((e) => e.childNodes[0]?.textContent)).toMatch(/^match every .*… #0 \(acked\)$/);
    const rect = await boxOf(page.locator('#flow-svg .subtask[data-subtask="2/0"] rect'));
    const text = await boxOf(label);
    expect(rect.width).toBeGreaterThan(150);
    expect(text.x + text.width).toBeLessThanOrEqual(rect.x + rect.width);
    const boxLabel = page.locator('#flow-svg .vertex-box-label[data-full-name]').nth(2);
    expect(await boxLabel.getAttribute('data-full-name')).toBe(FULL_NAME);
    expect(await boxLabel.textContent()).toContain('…');
    // Step: one event per click, also among events at the same time.
    expect(flow.events.some((e, i) => i > 0 && e.t === flow.events[i - 1]!.t)).toBe(true);
    await page.click('#flow-restart');
    const first = await page.locator('#flow-log li').count();
    for (let i = first; i < flow.events.length; i++) {
      await page.click('#flow-step');
      expect(await page.locator('#flow-log li').count()).toBe(i + 1);
      expect(Number(await page.locator('#flow-svg').getAttribute('data-time'))).toBeCloseTo(flow.events[i]!.t, 1);
    }
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-figures-flow.png'), fullPage: true });
  });

  it('configuration values carry their units', async () => {
    await page.click('a[data-tab="config"]');
    await page.locator('#config-table').waitFor();
    const rows = Object.fromEntries(
      await page.locator('#config-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[0]?.textContent, tr.children[1]?.textContent])),
    );
    expect(rows.timeout).toMatch(/^[\d,]+ ms$/);
    expect(rows.min_pause).toMatch(/^[\d,]+ ms$/);
    expect(rows.interval).toBe('none (only the final checkpoint of a bounded job)');
    expect(rows.retained).toBe('3 completed checkpoints');
    expect(rows.max_concurrent).toBe('1 checkpoint at a time');
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-figures-config.png'), fullPage: true });
  });

  it("an ended job's uptime stops; no console errors", async () => {
    await page.click('a[data-tab="overview"]');
    await job.client.cancel();
    await settled(
      () => page.locator('#job-state').textContent(),
      (s) => s === 'CANCELED',
    );
    const headers = await page.locator('#job-figures th').allTextContents();
    expect(headers.at(-1)).toBe('ran for');
    const ran = (await page.locator('#job-figures tbody td').allTextContents()).at(-1);
    expect(ran).toMatch(/^\d+ s \(ended\)$/);
    const d = (await rest.get(`/jobs/${jid}`)).body;
    expect(ran).toBe(`${Math.round(d.duration / 1000)} s (ended)`);
    expect(consoleErrors).toEqual([]);
  });
});
