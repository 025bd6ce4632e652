/**
 * The dashboard's Advice tab in Chromium, for a real running job: first the count of checkpoints
 * the advisor still needs, then, once enough completed, the situation in numbers and the
 * recommendation its figures lead to — the job checkpoints every 10 minutes, above the seeds' 1-3
 * minutes, so `interval-too-long` fires — each with its figure, rule and cost, as
 * `GET /jobs/:id/advice` gives them.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';
import { assertBrowser, BROWSER_SKIPPED, type DashboardSession, openDashboardSession } from './browser-page.ts';
import { webClient } from './web-client.ts';

const ARTEFACTS = path.resolve('test-results');

describe.skipIf(BROWSER_SKIPPED)('dashboard Advice tab in Chromium', () => {
  let session: DashboardSession;

  beforeAll(async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    // every 10 minutes: no periodic checkpoint within the test, the test triggers them
    session = await openDashboardSession({ parallelism: 2, intervalMs: 600_000 }, 'advice-browser-token', 100);
    session.job.gate.allowUpTo(100);
    await session.job.gate.reached(2);
    await session.job.client.triggerCheckpoint();
  });
  afterAll(async () => {
    await session?.close();
  });

  it('says how many checkpoints it needs, then shows the situation and each recommendation with figure, rule and cost', async () => {
    const { job, server, page, consoleErrors } = session;
    await page.goto(`${server.address}/#advice`);
    const tooFew = page.locator('#advice-too-few');
    await tooFew.waitFor();
    expect(await tooFew.textContent()).toBe(`No advice yet: 1 checkpoint measured, the advisor needs ${MIN_CHECKPOINTS}.`);

    for (let i = 1; i < MIN_CHECKPOINTS; i++) await job.client.triggerCheckpoint();
    // the tab refetches with the next live update
    await page.locator('#advice-recommendations tbody tr').first().waitFor();
    const advice = (await webClient(server.address, '').get(`/jobs/${job.client.jobId}/advice`)).body;
    expect(advice.kind).toBe('advice');
    expect(advice.recommendations.map((r: { rule: string }) => r.rule)).toEqual(['interval-too-long']);

    const situation = await page.locator('#advice-situation tbody tr').allTextContents();
    expect(situation[0]).toBe(`checkpoints measured${MIN_CHECKPOINTS}: ${MIN_CHECKPOINTS} completed, 0 timed out (0%), 0 failed`);
    expect(situation).toContain(
      'slowest checkpoint' + `${advice.situation.maxDurationMs.toLocaleString('en-US')} ms (interval 600,000 ms, timeout 600,000 ms)`,
    );
    expect(situation).toContain('restore time of the last recoveryno recovery yet');
    expect(situation.find((r) => r.startsWith('sync / async phase'))).toMatch(
      /^sync \/ async phaseup to \d[\d,]* ms \/ \d[\d,]* ms \(sync \d+% of both, async \d+% of checkpoint time\)$/,
    );

    const cells = await page.locator('#advice-recommendations tbody tr').first().locator('td').allTextContents();
    const r = advice.recommendations[0];
    expect(cells).toEqual([r.change, r.because, r.rule, r.cost]);
    expect(cells[0]).toBe('checkpointing.intervalMs: 180000');
    expect(cells[1]).toContain('the interval is 600000 ms');
    expect(cells[3]).toBe('more checkpoints: more load on the job and the storage');
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-advice.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
});
