/**
 * The dashboard in a real browser (playwright-core driving the machine's Chromium, headless):
 * the overview of a running job, a checkpoint's drill-down, and the barrier-flow view played event
 * by event, checked against the REST details of the same checkpoint. Screenshots go to
 * test-results/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Flow } from '../../src/web/rest/responses.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { assertBrowser, BROWSER_SKIPPED, openBrowserPage } from './browser-page.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { webClient } from './web-client.ts';

const ARTEFACTS = path.resolve('test-results');

/** Waits until the barrier-flow view shows checkpoint `cid` (polls: the page's CSP forbids evaluated strings). */
async function selected(page: Page, cid: number): Promise<void> {
  while ((await page.inputValue('#flow-checkpoint')) !== String(cid)) await new Promise((r) => setTimeout(r, 20));
}

describe.skipIf(BROWSER_SKIPPED)('dashboard in Chromium', () => {
  let job: RunningWebJob;
  let server: WebServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: string[];
  let cid: number;

  beforeAll(async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    job = await startWebJob({ parallelism: 2 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'browser-token', sampleIntervalMs: 200 });
    job.gate.allowUpTo(100);
    await job.gate.reached(2);
    cid = (await job.client.triggerCheckpoint()).checkpointId;
    job.gate.allowUpTo(200);
    await job.gate.reached(2);
    await job.client.triggerCheckpoint();
    ({ browser, page, consoleErrors } = await openBrowserPage());
  });
  afterAll(async () => {
    await browser?.close();
    await job?.client.cancel();
    await server?.close();
  });

  it('shows the overview: the job graph with every vertex, its rates and backpressure', async () => {
    await page.goto(`${server.address}/`);
    await page.locator('#job-graph .vertex').first().waitFor();
    expect(await page.locator('#job-graph .vertex').count()).toBe(3);
    const names = await page.locator('#job-graph .vertex .vertex-name').allTextContents();
    expect(names).toEqual(['orders', 'payments', 'match -> collect']);
    expect(await page.locator('#job-title').textContent()).toContain(job.client.jobId);
    expect(await page.locator('#job-state').textContent()).toBe('RUNNING');
    expect(await page.locator('#job-graph .vertex.bp-ok, #job-graph .vertex.bp-low, #job-graph .vertex.bp-high').count()).toBe(3);
    expect(await page.locator('#backpressure-table tbody tr').count()).toBe(6);
    // A job with a CollectSink runs in this thread: the task managers panel says so.
    expect(await page.locator('#no-taskmanagers').count()).toBe(1);
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-overview.png'), fullPage: true });
  });

  it('lists the checkpoint history and drills down per vertex and subtask', async () => {
    await page.click('a[data-tab="checkpoints"]');
    const row = page.locator(`#checkpoint-history tr[data-checkpoint="${cid}"]`);
    await row.waitFor();
    expect(await page.locator('#checkpoint-history tbody tr').count()).toBe(2);
    await row.click();
    await page.locator('#vertex-details tbody tr').nth(2).waitFor();
    expect(await page.locator('#vertex-details tbody tr').count()).toBe(3);
    await page.click('#vertex-details button[data-vertex="2"]');
    await page.locator('#subtask-table tbody tr').nth(1).waitFor();
    const cells = await page.locator('#subtask-table tbody tr').first().locator('td').allTextContents();
    expect(cells[1]).toBe('completed');
    expect(cells[9]).toBe('aligned');
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-checkpoints.png'), fullPage: true });
  });

  it('plays the barrier flow of a checkpoint; every drawn step matches the REST details', async () => {
    const rest = webClient(server.address, '');
    const jid = job.client.jobId;
    const flow = (await rest.get(`/jobs/${jid}/checkpoints/details/${cid}/flow`)).body as Flow;
    await page.click(`#checkpoint-history button.flow-button[data-checkpoint="${cid}"]`);
    await selected(page, cid);
    await page.selectOption('#flow-speed', '1000');
    await page.locator(`#flow-svg[data-checkpoint="${cid}"][data-finished="true"]`).waitFor();
    // Played to the end: the log has every event of the REST flow, in order.
    const logged = await page
      .locator('#flow-log li')
      .evaluateAll((lis) =>
        lis.map((li) => [li.getAttribute('data-type'), li.getAttribute('data-vertex'), li.getAttribute('data-subtask'), Number(li.getAttribute('data-t'))]),
      );
    expect(logged).toEqual(flow.events.map((e) => [e.type, e.vertex ?? null, e.subtask === undefined ? null : String(e.subtask), e.t]));
    // The acks drawn are the subtasks the REST details list, at their ack times.
    const details = (await rest.get(`/jobs/${jid}/checkpoints/details/${cid}`)).body;
    expect(await page.locator('#flow-svg .subtask.acked').count()).toBe(details.num_acknowledged_subtasks);
    for (const vid of ['0', '1', '2']) {
      const subs = (await rest.get(`/jobs/${jid}/checkpoints/details/${cid}/subtasks/${vid}`)).body.subtasks;
      for (const s of subs) {
        const ack = flow.events.find((e) => e.type === 'ack' && e.vertex === vid && e.subtask === s.index)!;
        // REST timestamps are whole ms; the flow's times are to 0.1 ms.
        expect(Math.abs(ack.t - (s.ack_timestamp - details.trigger_timestamp))).toBeLessThanOrEqual(1.05);
        const li = page.locator(`#flow-log li[data-type="ack"][data-vertex="${vid}"][data-subtask="${s.index}"]`);
        expect(await li.count()).toBe(1);
      }
    }
    expect(await page.locator('#flow-coordinator.complete').count()).toBe(1);
    // Step from the start, one event at a time: at every step the blocked channels and the travelling barriers drawn are the ones the events say.
    await page.click('#flow-restart');
    let sawBlocked = 0;
    for (let i = await page.locator('#flow-log li').count(); i < flow.events.length; i++) {
      await page.click('#flow-step');
      expect(await page.locator('#flow-log li').count()).toBe(i + 1);
      const drawnT = Number(await page.locator('#flow-svg').getAttribute('data-time'));
      expect(drawnT).toBeCloseTo(flow.events[i]!.t, 1);
      const blocked = flow.events.filter((e) => e.type === 'blocked' && e.t <= drawnT && drawnT < (e.until ?? 0)).map((e) => e.channel);
      const drawnBlocked = await page.locator('#flow-svg line.channel.blocked').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-channel')));
      expect(drawnBlocked.sort()).toEqual(blocked.sort());
      const travelling = flow.events.filter((e) => e.type === 'barrier' && (e.sent ?? 0) <= drawnT && drawnT < e.t).map((e) => e.channel);
      const drawnDots = await page.locator('#flow-svg circle.barrier-dot').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-channel')));
      expect(drawnDots.sort()).toEqual(travelling.sort());
      // queued buffers are drawn only ahead of travelling barriers
      const drawnBuffers = await page.locator('#flow-svg rect.buffer').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-channel')));
      for (const ch of drawnBuffers) expect(travelling).toContain(ch);
      if (blocked.length > sawBlocked) {
        sawBlocked = blocked.length;
        await page.screenshot({ path: path.join(ARTEFACTS, 'barrier-flow-aligning.png'), fullPage: true });
      }
    }
    await page.screenshot({ path: path.join(ARTEFACTS, 'barrier-flow.png'), fullPage: true });
  });

  it('updates live and shows configuration and exceptions without reloading; no console errors', async () => {
    const before = Number(await page.locator('body').getAttribute('data-updates'));
    job.gate.allowUpTo(300);
    const third = (await job.client.triggerCheckpoint()).checkpointId;
    await page.click('a[data-tab="checkpoints"]');
    await page.locator(`#checkpoint-history tr[data-checkpoint="${third}"]`).waitFor();
    expect(Number(await page.locator('body').getAttribute('data-updates'))).toBeGreaterThan(before);
    // Following live, the barrier-flow view switches to a new checkpoint as it starts.
    await page.click('a[data-tab="flow"]');
    await page.check('#flow-follow');
    job.gate.allowUpTo(400);
    const fourth = (await job.client.triggerCheckpoint()).checkpointId;
    await selected(page, fourth);
    // The picker names the new checkpoint before its flow is fetched: wait for the drawing of that one.
    await page.locator(`#flow-svg[data-checkpoint="${fourth}"][data-finished="true"]`).waitFor();
    expect(await page.locator('#flow-log li[data-type="ack"]').count()).toBe(6);
    await page.click('a[data-tab="config"]');
    await page.locator('#config-table').waitFor();
    expect(await page.locator('#config-table').textContent()).toContain('exactly_once');
    await page.click('a[data-tab="exceptions"]');
    await page.locator('#no-exceptions').waitFor();
    expect(consoleErrors).toEqual([]);
  });
});
