/**
 * The overview's task managers panel in a real browser, for a keyed count (keyBy shuffle) from a
 * job module on two task managers in worker threads: one row per task manager with where it runs,
 * its state, heartbeat, clock offset, data traffic and subtasks, as `GET /jobs/:id/taskmanagers`
 * gives them. Screenshots go to test-results/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobClient, StreamEnvironment } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import type { TaskManagers } from '../../src/web/rest/responses.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import build from '../cluster/fixtures/tm-counts-job.ts';
import { whenRunning } from '../support/clients.ts';
import { tempDir } from '../support/jobs.ts';
import { assertBrowser, BROWSER_SKIPPED, openBrowserPage } from './browser-page.ts';
import { until, webClient } from './web-client.ts';

const ARTEFACTS = path.resolve('test-results');
const MODULE = path.join(import.meta.dirname, '..', 'cluster', 'fixtures', 'tm-counts-job.ts');
const VARS = ['TM_RECORDS', 'TM_RATE', 'TM_OUT'];

/** Resolves once `read` gives `want` (polls: the page's CSP forbids evaluated strings). */
async function settled<T>(read: () => Promise<T>, want: (x: T) => boolean): Promise<T> {
  for (;;) {
    const x = await read();
    if (want(x)) return x;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(BROWSER_SKIPPED)('dashboard task managers panel in Chromium (worker threads)', () => {
  let client: JobClient;
  let server: WebServer;
  let browser: Browser;
  let page: Page;
  let consoleErrors: string[];
  let rest: ReturnType<typeof webClient>;

  beforeAll(async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    // Workers copy the environment when they start: a slow, endless count the test cancels.
    Object.assign(process.env, { TM_RECORDS: '100000000', TM_RATE: '2000', TM_OUT: tempDir('weir-dash-tm-out-') });
    const env = StreamEnvironment.create({
      parallelism: 2,
      taskManagers: 2,
      checkpointStorage: tempDir('weir-dash-tm-chk-'),
      heartbeat: { intervalMs: 100, timeoutMs: 30_000 },
      cancellationTimeoutMs: 120_000,
    });
    build(env);
    env.setJobModule(MODULE);
    let master: JobMaster | null = null;
    client = await env.executeAsync('tm-counts', { onJobMaster: (m) => (master = m) });
    await whenRunning(client);
    server = await startWebServer({ client, master: master!, token: 'tm-dash-token', sampleIntervalMs: 100 });
    rest = webClient(server.address, '');
    await until(
      () => rest.get(`/jobs/${client.jobId}/taskmanagers`),
      (r) => r.body.taskmanagers.every((t: any) => t.state === 'running' && t.dataBytesSent > 0 && t.clockOffset !== null),
    );
    ({ browser, page, consoleErrors } = await openBrowserPage());
  });
  afterAll(async () => {
    for (const v of VARS) delete process.env[v];
    await browser?.close();
    await client?.cancel();
    await server?.close();
  });

  it('shows one row per task manager: host, pid, worker thread, running, heartbeat, offset, bytes and its subtasks', async () => {
    await page.goto(`${server.address}/`);
    await page.locator('#taskmanagers-table tbody tr').nth(1).waitFor();
    expect(await page.locator('#taskmanagers-table tbody tr').count()).toBe(2);
    const headers = await page.locator('#taskmanagers-table th').allTextContents();
    const col = (name: string) => headers.indexOf(name);
    const { taskmanagers } = (await rest.get(`/jobs/${client.jobId}/taskmanagers`)).body as TaskManagers;
    const job = (await rest.get(`/jobs/${client.jobId}`)).body;
    const names = new Map<string, string>(job.vertices.map((v: { id: string; name: string }) => [v.id, v.name]));
    for (const [i, tm] of taskmanagers.entries()) {
      // Live updates redraw the table: read a row until its bytes are shown (the figures move on meanwhile).
      const cells = await settled(
        () => page.locator('#taskmanagers-table tbody tr').nth(i).locator('td').allTextContents(),
        (c) => c.length === headers.length && c[col('data sent')] !== '0 B (0 msgs)',
      );
      expect(cells[col('#')]).toBe(String(i));
      expect(cells[col('host')]).toBe(hostname());
      expect(cells[col('pid')]).toBe(String(process.pid));
      expect(cells[col('transport')]).toBe('worker-thread');
      expect(cells[col('state')]).toBe('running');
      expect(cells[col('slots used')]).toBe('1');
      expect(cells[col('last heartbeat')]).toMatch(/ ms ago$/);
      expect(cells[col('round trip')]).toMatch(/ ms$/);
      expect(cells[col('clock offset')]).toMatch(/^[+-].* ms ± .* ms$/);
      expect(cells[col('data received')]).toMatch(/B \(\d[\d,]* msgs\)$/);
      expect(cells[col('subtasks')]).toBe(tm.subtasks.map((s) => `${names.get(s.vertex)} ${s.subtask}`).join(', '));
    }
    await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-task-managers.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
});
