/**
 * stall: how long a full checkpoint of the embedded backend stops record processing (issue 11,
 * goal: the longest stall <= 50 ms at 1M keys x 100 B).
 *
 * A keyed job (parallelism 1, in-thread, `stateBackend: 'embedded'`, `incremental: false`) reads an
 * unbounded generator as fast as it can; its process function writes a 100-byte value per key and
 * notes, with `performance.now()`, the gap since the record before. First every key is written once
 * (the fill), then records update a hot subset of keys that stays cached (see `keyOf`), in rounds: a quiet window with no checkpoint, then a checkpoint triggered with
 * `JobClient.triggerCheckpoint` while records keep flowing. The figures:
 *
 *   gap_max_ms_checkpoint   longest gap between two processed records from the trigger until the
 *                           checkpoint completed (its sync and async phases), max over rounds
 *   gap_max_ms_quiet        the same outside checkpoints, over windows as long as the checkpoints
 *   sync_ms, async_ms       the keyed subtask's sync and async phase durations (median over rounds)
 *   records_per_sec_*       records processed per second during the checkpoints and outside them
 *
 * `stall_vs_quiet` = gap_max_ms_checkpoint / gap_max_ms_quiet. Timings are measured, never asserted;
 * the scenario throws if the checkpoint persisted fewer keys than were written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { JobClient, KeyedProcessFunction, Sink, ValueState } from '../../src/index.ts';
import { sleep } from '../../src/core/adapters.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, type Figures } from '../lib/result.ts';

const SCENARIO = 'stall';
const args = parseScenarioArgs(process.argv.slice(2));
if (args.variants !== null) throw new Error('stall: --variants is not supported');
const quick = args.quick;
const params = {
  quick,
  keys: quick ? 50_000 : 1_000_000,
  valueBytes: 100,
  cacheEntriesMax: 100_000,
  hotKeys: quick ? 20_000 : 50_000,
  rounds: quick ? 2 : 3,
  parallelism: 1,
  taskManagers: 1,
  statistic: 'gaps: max over rounds; phase durations: median over rounds; one job, in-thread',
};

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);

/** What the process function observes; the driver reads and resets it (same thread). */
const probe = {
  records: 0,
  last: 0,
  gapMaxMs: 0,
  reset(): void {
    this.gapMaxMs = 0;
    this.last = performance.now();
  },
};

const PAD = 'x'.repeat(params.valueBytes);

function keyedWrite(): KeyedProcessFunction<number, number, number> {
  let value: ValueState<string>;
  return {
    open(ctx) {
      value = ctx.getState(new ValueStateDescriptor<string>('v'));
    },
    processElement(key, _ctx, _out) {
      const now = performance.now();
      const gap = now - probe.last;
      if (gap > probe.gapMaxMs) probe.gapMaxMs = gap;
      probe.last = now;
      probe.records++;
      // A fresh 100-byte value per record: the key's previous value is overwritten.
      value.update(`${key}:${probe.records}:${PAD}`.slice(0, params.valueBytes));
    },
  };
}

/**
 * Record i's key: first every key once in order (the fill), then the last `hotKeys` keys of the fill
 * round and round. The hot keys stay in the backend's cache, so no eviction (a write transaction of
 * random puts into the store, which stalls the record path by itself) mixes into the checkpoint's
 * stall; the checkpoint still reads all the keys, most of them from the store.
 */
const keyOf = (i: number): number => (i < params.keys ? i : params.keys - params.hotKeys + (i % params.hotKeys));

interface Window {
  readonly gapMaxMs: number;
  readonly ms: number;
  readonly records: number;
}

async function window(run: () => Promise<void>): Promise<Window> {
  probe.reset();
  const records0 = probe.records;
  const t0 = performance.now();
  await run();
  return { gapMaxMs: probe.gapMaxMs, ms: performance.now() - t0, records: probe.records - records0 };
}

async function main(): Promise<void> {
  const metrics: Figures = { load_average_1m_start: loadavg()[0]! };
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-stall-'));
  let client: JobClient | null = null;
  try {
    const env = StreamEnvironment.create({
      parallelism: params.parallelism,
      restartStrategy: { type: 'none' },
      // Only the checkpoints this scenario triggers (the interval is longer than the run).
      checkpointing: { intervalMs: 3_600_000 },
      checkpointStorage: dir,
      stateBackend: 'embedded',
      incremental: false,
      embeddedState: { cacheEntriesMax: params.cacheEntriesMax },
    });
    const sink: Sink<number> = { name: 'none', kind: 'plain', createWriter: () => ({ write: () => undefined }) };
    env
      .generate({ count: Number.POSITIVE_INFINITY, seed: 1 }, keyOf)
      .uid('keys')
      .keyBy((k) => k)
      .process(keyedWrite)
      .uid('write')
      .sinkTo(sink)
      .uid('sink');
    const c = await env.executeAsync('bench-stall');
    client = c;
    const fillStart = performance.now();
    while (probe.records < params.keys) await sleep(50);
    log(`${params.keys.toLocaleString('en-US')} keys written in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

    const quiet: Window[] = [];
    const during: Window[] = [];
    const syncMs: number[] = [];
    const asyncMs: number[] = [];
    for (let round = 1; round <= params.rounds; round++) {
      let checkpointId = 0;
      const cp = await window(async () => {
        checkpointId = (await c.triggerCheckpoint()).checkpointId;
      });
      // A quiet window as long as the checkpoint, right after it (its garbage is billed here too).
      const q = await window(() => sleep(Math.max(200, cp.ms)));
      during.push(cp);
      quiet.push(q);
      const last = c.metrics().lastCheckpoint;
      const stats = last?.checkpointId === checkpointId ? last : undefined;
      // The keyed subtask is the one with the most state (the source's position is a few bytes).
      const keyed = stats?.subtasks.reduce((a, b) => (b.metrics.stateBytes > a.metrics.stateBytes ? b : a)).metrics;
      if (keyed === undefined) throw new Error(`checkpoint ${checkpointId}: no figures of the keyed subtask`);
      if (keyed.stateBytes < params.keys * params.valueBytes)
        throw new Error(`checkpoint ${checkpointId} persisted ${keyed.stateBytes} bytes, fewer than the keys' values`);
      syncMs.push(keyed.syncMs);
      asyncMs.push(keyed.asyncMs);
      log(
        `round ${round}: checkpoint ${checkpointId} in ${cp.ms.toFixed(0)} ms (sync ${keyed.syncMs.toFixed(1)} ms, async ${keyed.asyncMs.toFixed(0)} ms, ${(keyed.stateBytes / 1e6).toFixed(0)} MB): longest gap ${cp.gapMaxMs.toFixed(1)} ms, ${cp.records.toLocaleString('en-US')} records; quiet ${q.ms.toFixed(0)} ms: longest gap ${q.gapMaxMs.toFixed(1)} ms, ${q.records.toLocaleString('en-US')} records`,
      );
    }
    metrics.gap_max_ms_checkpoint = Math.max(...during.map((w) => w.gapMaxMs));
    metrics.gap_max_ms_quiet = Math.max(...quiet.map((w) => w.gapMaxMs));
    metrics.gap_median_of_max_ms_checkpoint = median(during.map((w) => w.gapMaxMs));
    metrics.sync_ms = median(syncMs);
    metrics.async_ms = median(asyncMs);
    metrics.checkpoint_ms = median(during.map((w) => w.ms));
    metrics.records_per_sec_checkpoint = median(during.map((w) => w.records / (w.ms / 1000)));
    metrics.records_per_sec_quiet = median(quiet.map((w) => w.records / (w.ms / 1000)));
    metrics.load_average_1m_end = loadavg()[0]!;
    const ratios: Figures = {
      stall_vs_quiet: metrics.gap_max_ms_checkpoint / metrics.gap_max_ms_quiet,
      throughput_checkpoint_vs_quiet: metrics.records_per_sec_checkpoint / metrics.records_per_sec_quiet,
    };
    await c.cancel();
    client = null;
    publishResult(buildResult(SCENARIO, params, metrics, ratios), args.outDir);
  } finally {
    if (client !== null) await client.cancel().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

runScenario(SCENARIO, main);
