#!/usr/bin/env node
/**
 * Makes docs/barrier-flow.png: runs `weir demo` (the bank-transfers job with its injected crash),
 * opens its dashboard in the machine's Chromium once the job recovered, picks the retained
 * checkpoint whose alignment held the most channels back, steps its barrier flow to that moment
 * and takes a screenshot. Needs a built dist/ (`npm run build`) and /usr/bin/chromium.
 *   node scripts/screenshot-barrier-flow.mjs [out.png]
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, 'docs', 'barrier-flow.png'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const demo = spawn(process.execPath, [path.join(ROOT, 'bin', 'weir.mjs'), 'demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
let stderr = '';
demo.stderr.on('data', (d) => (stderr += d));
demo.stdout.resume();
let address = null;
while (address === null) {
  address = /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\//m.exec(stderr)?.[1] ?? null;
  if (demo.exitCode !== null) throw new Error(`weir demo ended before its dashboard line:\n${stderr}`);
  await sleep(20);
}
const browser = await chromium.launch({ executablePath: process.env.WEIR_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
const get = async (p) => (await fetch(`${address}${p}`)).json();
const { jobs } = await get('/jobs');
const jid = jobs[0].id;
// After the crash and recovery, with a completed checkpoint of the new attempt.
let cid = null;
for (;;) {
  const job = await get(`/jobs/${jid}`);
  const cps = await get(`/jobs/${jid}/checkpoints`);
  const after = cps.history.filter((h) => h.status === 'COMPLETED' && h.traced && job['restored-from'] !== null && h.id > job['restored-from']);
  if (job.restarts >= 1 && after.length > 0) {
    let best = -1;
    for (const h of after) {
      const flow = await get(`/jobs/${jid}/checkpoints/details/${h.id}/flow`);
      const blocked = flow.events.filter((e) => e.type === 'blocked').length;
      if (blocked > best) [best, cid] = [blocked, h.id];
    }
    break;
  }
  await sleep(100);
}
const flow = await get(`/jobs/${jid}/checkpoints/details/${cid}/flow`);
await page.goto(`${address}/#flow/${cid}`);
await page.locator('#flow-svg').waitFor();
while ((await page.inputValue('#flow-checkpoint')) !== String(cid) || (await page.locator('#flow-log li').count()) === 0) await sleep(20);
await page.click('#flow-play'); // pause
await page.click('#flow-restart');
// Step to the busiest moment: channels held back, barriers travelling, snapshots being written.
const times = [...new Set(flow.events.map((e) => e.t))];
const blockedAt = (t) => flow.events.filter((e) => e.type === 'blocked' && e.t <= t && t < e.until).length;
const busyAt = (t) =>
  3 * blockedAt(t) +
  flow.events.filter((e) => (e.type === 'barrier' && e.sent <= t && t < e.t) || ((e.type === 'sync' || e.type === 'async') && e.t <= t && t < e.t + e.duration))
    .length;
const target = times.reduce((a, t) => (busyAt(t) > busyAt(a) ? t : a), times[Math.floor(times.length / 2)]);
for (const t of times.slice(1)) {
  if (t > target) break;
  await page.click('#flow-step');
}
await page.screenshot({ path: OUT });
await browser.close();
process.stderr.write(`wrote ${OUT}: checkpoint ${cid} of job ${jid} at t=${target} ms (${blockedAt(target)} channels held back)\n`);
demo.kill('SIGINT');
