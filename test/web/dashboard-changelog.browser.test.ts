/**
 * The dashboard's State log tab in Chromium, for a real job on the changelog state backend: its
 * link appears, and each subtask's row shows the bytes uploaded, the uploads and the newest
 * materialization as `GET /jobs/:id/changelog` gives them; a job on another backend has no link.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBrowser, BROWSER_SKIPPED, type DashboardSession, openDashboardSession } from './browser-page.ts';
import { until, webClient } from './web-client.ts';

const ARTEFACTS = path.resolve('test-results');

describe.skipIf(BROWSER_SKIPPED)('dashboard State log tab in Chromium', () => {
  let session: DashboardSession;

  beforeAll(async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    session = await openDashboardSession(
      { parallelism: 2, intervalMs: 600_000, stateBackend: { type: 'changelog', over: { type: 'embedded' }, materializationIntervalMs: 50, uploadDelayMs: 1 } },
      'changelog-browser-token',
      100,
    );
    session.job.gate.allowUpTo(100);
    await session.job.gate.reached(2);
    await new Promise((r) => setTimeout(r, 60));
    await session.job.client.triggerCheckpoint();
    await session.job.client.triggerCheckpoint();
  });
  afterAll(async () => {
    await session?.close();
  });

  it("shows each subtask's log and materialization as the REST answer has them", async () => {
    const { job, server, page, consoleErrors } = session;
    const web = webClient(server.address, '');
    // Settled: every subtask materialized, and two answers in a row agree but for the ages (the
    // job is held, yet a checkpoint's materialization or last upload may still be finishing).
    const withoutAges = (body: { vertices: unknown[] }) => JSON.stringify(body.vertices, (k, x) => (k === 'materialization-age-ms' ? undefined : x));
    let previous = '';
    const rest = (
      await until(
        () => web.get(`/jobs/${job.client.jobId}/changelog`),
        (r) => {
          const settled = r.body.vertices[0]?.subtasks.every((s: { materializations: number }) => s.materializations >= 1) && withoutAges(r.body) === previous;
          previous = withoutAges(r.body);
          return settled;
        },
      )
    ).body;
    await page.goto(`${server.address}/#changelog`);
    const v = rest.vertices[0];
    const rows = page.locator(`#changelog-${v.id} tbody tr`);
    // The page shows the tab's link once its first answers arrived (a busy machine: not at load).
    await rows.nth(2).waitFor();
    expect(await page.locator('#tabs a[data-tab="changelog"]').isVisible()).toBe(true);
    const cells = await rows.first().locator('td').allTextContents();
    const s0 = v.subtasks[0];
    // The job is held: nothing moves between the answer and the page but the materialization's age.
    expect(cells[0]).toBe('0');
    expect(cells[4]).toBe(`${s0.uploads.toLocaleString('en-US')} (${s0['upload-retries']} retried, ${s0['upload-failures']} failed)`);
    expect(cells[5]).toBe(String(s0.materializations));
    expect(cells[6]).toMatch(/^\d[\d,]* (ms|s)$/);
    expect(await rows.nth(2).locator('td').first().textContent()).toBe('all');
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-changelog.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
});
