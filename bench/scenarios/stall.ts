/**
 * stall: how long a full checkpoint of the embedded backend stops record processing (goal: the
 * longest stall <= 50 ms at 1M keys x 100 B).
 *
 * The job (bench/lib/stall-job.ts; `stateBackend: 'embedded'`, `incremental: false`) reads an
 * unbounded generator as fast as it can; its process function writes a 100-byte value per key and
 * logs every gap of 5 ms or more between two of its records, with the time it ended. First every
 * key is written once (the fill), then records update a hot subset of keys that stays cached; in
 * rounds: a checkpoint triggered with `JobClient.triggerCheckpoint` while records keep flowing, then
 * a quiet window as long with no checkpoint. Two variants, one after the other:
 *
 *   in_thread   parallelism 1, every subtask in this thread
 *   two_tms     parallelism 2 on two task managers (worker threads), 500k keys per keyed subtask
 *
 * Figures per variant: the longest gap ending inside a checkpoint (trigger to completion: its sync
 * and async phases) and inside the quiet windows (max over rounds), the keyed subtasks' sync and
 * async phase durations (the longest subtask's, median over rounds) and records/s (sinks) in both.
 * `stall_vs_quiet_*` = longest gap during checkpoints / longest gap outside. Timings are measured,
 * never asserted; the scenario throws if a checkpoint persisted fewer bytes than the keys' values.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import type { JobClient } from '../../src/index.ts';
import { sleep } from '../../src/core/adapters.ts';
import build, { GAP_LOGGED_MS } from '../lib/stall-job.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, type Figures } from '../lib/result.ts';

const SCENARIO = 'stall';
const JOB_MODULE = fileURLToPath(new URL('../lib/stall-job.ts', import.meta.url));
const args = parseScenarioArgs(process.argv.slice(2));
const quick = args.quick;
const params = {
  quick,
  keys: quick ? 50_000 : 1_000_000,
  valueBytes: 100,
  cacheEntriesMax: 100_000,
  hotKeys: quick ? 20_000 : 50_000,
  rounds: quick ? 2 : 3,
  gapLoggedMs: GAP_LOGGED_MS,
  variants: args.variants ?? ['in_thread', 'two_tms'],
  statistic: 'gaps: max over rounds (a gap shorter than gapLoggedMs counts as gapLoggedMs); phase durations: median over rounds',
};

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);
const wallNow = () => performance.timeOrigin + performance.now();

interface Window {
  readonly start: number;
  readonly end: number;
  readonly records: number;
}

/** The longest logged gap that ended inside one of the windows (at least GAP_LOGGED_MS). */
function longestGap(gaps: ReadonlyArray<readonly [number, number]>, windows: readonly Window[]): number {
  let max = GAP_LOGGED_MS;
  for (const [end, gap] of gaps) if (gap > max && windows.some((w) => end >= w.start && end <= w.end)) max = gap;
  return max;
}

async function timed(c: JobClient, run: () => Promise<void>): Promise<Window> {
  const records0 = c.metrics().recordsOut;
  const start = wallNow();
  await run();
  return { start, end: wallNow(), records: c.metrics().recordsOut - records0 };
}

async function runVariant(variant: string, metrics: Figures, ratios: Figures): Promise<void> {
  const twoTms = variant === 'two_tms';
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-stall-'));
  const gapsFile = join(dir, 'gaps.txt');
  process.env.STALL_KEYS = String(params.keys);
  process.env.STALL_HOT_KEYS = String(params.hotKeys);
  process.env.STALL_GAPS_FILE = gapsFile;
  let client: JobClient | null = null;
  try {
    const env = StreamEnvironment.create({
      parallelism: twoTms ? 2 : 1,
      taskManagers: twoTms ? 2 : 'in-thread',
      restartStrategy: { type: 'none' },
      // Only the checkpoints this scenario triggers (the interval is longer than the run).
      checkpointing: { intervalMs: 3_600_000 },
      checkpointStorage: join(dir, 'checkpoints'),
      stateBackend: 'embedded',
      incremental: false,
      embeddedState: { cacheEntriesMax: params.cacheEntriesMax },
    });
    build(env);
    env.setJobModule(JOB_MODULE);
    const c = await env.executeAsync(`bench-stall-${variant}`);
    client = c;
    const fillStart = performance.now();
    // Task managers report their figures with heartbeats: wait a little past the fill.
    while (c.metrics().recordsOut < params.keys * 1.05) await sleep(50);
    log(`${variant}: ${params.keys.toLocaleString('en-US')} keys written in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);
    const during: Window[] = [];
    const quiet: Window[] = [];
    const syncMs: number[] = [];
    const asyncMs: number[] = [];
    for (let round = 1; round <= params.rounds; round++) {
      let id = 0;
      const cp = await timed(c, async () => {
        id = (await c.triggerCheckpoint()).checkpointId;
      });
      // At least as long as the checkpoint; on task managers long enough to span heartbeats (their
      // record counts arrive with them, every second), so the quiet rate is never 0/0.
      const q = await timed(c, () => sleep(Math.max(twoTms ? 2500 : 200, cp.end - cp.start)));
      during.push(cp);
      quiet.push(q);
      const stats = c.metrics().lastCheckpoint;
      if (stats?.checkpointId !== id) throw new Error(`${variant}: checkpoint ${id} has no figures`);
      // The keyed subtasks are those with state of their own (a source's position is a few bytes).
      const keyed = stats.subtasks.map((s) => s.metrics).filter((m) => m.stateBytes > 1000);
      const stateBytes = keyed.reduce((a, m) => a + m.stateBytes, 0);
      if (stateBytes < params.keys * params.valueBytes)
        throw new Error(`${variant}: checkpoint ${id} persisted ${stateBytes} bytes, fewer than the keys' values`);
      syncMs.push(Math.max(...keyed.map((m) => m.syncMs)));
      asyncMs.push(Math.max(...keyed.map((m) => m.asyncMs)));
      log(
        `${variant} round ${round}: checkpoint ${id} in ${(cp.end - cp.start).toFixed(0)} ms (sync ${syncMs.at(-1)!.toFixed(1)} ms, async ${asyncMs.at(-1)!.toFixed(0)} ms, ${(stateBytes / 1e6).toFixed(0)} MB), ${cp.records.toLocaleString('en-US')} records; quiet ${(q.end - q.start).toFixed(0)} ms, ${q.records.toLocaleString('en-US')} records`,
      );
    }
    await c.cancel();
    client = null;
    const gaps = readFileSync(gapsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').map(Number) as [number, number]);
    const rate = (w: Window) => w.records / ((w.end - w.start) / 1000);
    metrics[`gap_max_ms_checkpoint_${variant}`] = longestGap(gaps, during);
    metrics[`gap_max_ms_quiet_${variant}`] = longestGap(gaps, quiet);
    metrics[`sync_ms_${variant}`] = median(syncMs);
    metrics[`async_ms_${variant}`] = median(asyncMs);
    metrics[`records_per_sec_checkpoint_${variant}`] = median(during.map(rate));
    metrics[`records_per_sec_quiet_${variant}`] = median(quiet.map(rate));
    ratios[`stall_vs_quiet_${variant}`] = metrics[`gap_max_ms_checkpoint_${variant}`]! / metrics[`gap_max_ms_quiet_${variant}`]!;
    ratios[`throughput_checkpoint_vs_quiet_${variant}`] = metrics[`records_per_sec_checkpoint_${variant}`]! / metrics[`records_per_sec_quiet_${variant}`]!;
    log(
      `${variant}: longest gap ${metrics[`gap_max_ms_checkpoint_${variant}`]!.toFixed(1)} ms during checkpoints, ${metrics[`gap_max_ms_quiet_${variant}`]!.toFixed(1)} ms outside`,
    );
  } finally {
    if (client !== null) await client.cancel().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const metrics: Figures = { load_average_1m_start: loadavg()[0]! };
  const ratios: Figures = {};
  for (const variant of params.variants) {
    if (variant !== 'in_thread' && variant !== 'two_tms') throw new Error(`stall: unknown variant ${variant} (known: in_thread, two_tms)`);
    await runVariant(variant, metrics, ratios);
  }
  metrics.load_average_1m_end = loadavg()[0]!;
  publishResult(buildResult(SCENARIO, params, metrics, ratios), args.outDir);
}

runScenario(SCENARIO, main);
