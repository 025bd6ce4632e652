/**
 * The dashboard's high-availability panel in Chromium: two `weir run --ha` job masters of the kill
 * job against the local PostgreSQL; the leader's overview names its epoch and store and lists the
 * standby the HA store knows, with the standby's web address, as the leader's `GET /ha` does.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { KILL_JOB } from '../cli/kill-harness.ts';
import { runCli, startCli, type CliRun } from '../cli/run-cli.ts';
import { waitForMatch } from '../cli/running-job.ts';
import { assertBrowser, BROWSER_SKIPPED, openBrowserPage } from './browser-page.ts';

const HA = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const ARTEFACTS = path.resolve('test-results');
const JOB = `ha-dashboard-${process.pid}`;

describe.skipIf(BROWSER_SKIPPED)('dashboard high-availability panel in Chromium', () => {
  const started: CliRun[] = [];
  afterAll(async () => {
    for (const c of started) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    const c = new pg.Client({ connectionString: HA });
    await c.connect();
    for (const t of ['weir_ha_leases', 'weir_ha_pointers', 'weir_ha_published', 'weir_ha_submissions', 'weir_ha_standbys'])
      await c.query(`DELETE FROM ${t} WHERE job = $1`, [JOB]).catch(() => {});
    await c.end();
  });

  it('the leader shows its epoch and store and the standby waiting, with its web address', { timeout: 180_000 }, async () => {
    assertBrowser();
    mkdirSync(ARTEFACTS, { recursive: true });
    const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-dashboard-'));
    const env = { KILL_RATE: '400', KILL_INTERVAL_MS: '200' };
    const jobMaster = () => {
      const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', HA, '--ha-job', JOB, '--ha-lease', '1500', '--web-host', '127.0.0.1'], { env });
      started.push(cli);
      return cli;
    };
    const a = jobMaster();
    const epoch = (await waitForMatch(a, /leading job '\S+' as \S+ \(epoch (\d+), lease 1500 ms\)$/m, 60_000, 'the leader'))[1]!;
    const dashboard = (await waitForMatch(a, /dashboard: (http:\/\/127\.0\.0\.1:\d+)\//, 60_000, "the leader's dashboard"))[1]!;
    const b = jobMaster();
    await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
    const listed = JSON.parse((await runCli(['list', '--json'])).stdout) as Array<{ pid: number; address: string }>;
    const standbyWeb = listed.find((e) => e.pid === b.child.pid)!.address;
    const { browser, page, consoleErrors } = await openBrowserPage();
    try {
      await page.goto(`${dashboard}/#overview`);
      const row = page.locator('#ha-standbys tbody tr');
      await row.first().waitFor({ timeout: 60_000 });
      const cells = await row.first().locator('td').allTextContents();
      expect(cells[0]).toMatch(new RegExp(`:${b.child.pid}:`));
      expect(cells[1]).toBe(standbyWeb);
      expect(cells[2]).toMatch(/^\d+(\.\d)? s ago$/);
      expect(await page.locator('h3', { hasText: 'High availability' }).textContent()).toBe(`High availability: leader epoch ${epoch} in ${HA}`);
      await page.screenshot({ path: path.join(ARTEFACTS, 'dashboard-ha.png'), fullPage: true });
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
