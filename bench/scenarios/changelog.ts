/**
 * changelog: what the changelog backend buys and costs against the embedded incremental and the
 * heap full checkpoints, on an update-heavy keyed workload (issue 27's Benchmark section).
 *
 * One subtask owning all 128 key groups holds `keys` keys of `valueBytes`-byte values and takes
 * random updates at a steady rate on the event loop (a batch, then a yield), while a checkpoint is
 * taken every `checkpointIntervalMs` into a checkpoint directory (files fsynced), its async part
 * running between the batches as a task's would. The changelog runs over the embedded backend
 * (incremental materializations every `materializationIntervalMs`). Per variant:
 *
 *   checkpoint_p50_ms / _p99_ms   from the sync part to the handle (the async part done)
 *   bytes_per_checkpoint          bytes written to storage over the run / checkpoints
 *   record_gap_max_ms             the longest gap between two update batches while a checkpoint ran
 *   record_gap_max_ms_quiet       the same with no checkpoint running (eviction, GC, materialization steps)
 *   recovery_ms                   restoring the last checkpoint into a fresh backend
 *   state_bytes                   bytes the last checkpoint refers to (what must be kept for it)
 *   state_bytes_mean / _max       the same over every checkpoint completed during the run: the
 *                                 changelog's figure is a sawtooth (the log grows between
 *                                 materializations), so one point at the end says little alone
 *   materialization_bytes_mean / log_bytes_mean   (changelog) the mean kept, split: the wrapped
 *                                 backend's materialization and the log segments after it
 *
 * Variants run one after the other on fresh directories (not interleaved: each needs its whole
 * duration of steady state). `--quick` (or WEIR_BENCH_QUICK=1) shrinks everything for a smoke run.
 * Correctness is checked, timings are not: every restore must equal the state written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueStateDescriptor } from '../../src/index.ts';
import type { ValueState } from '../../src/index.ts';
import { checkpointId, jobId, keyGroup } from '../../src/core/ids.ts';
import { realScheduler, systemClock, yieldToEventLoop } from '../../src/core/adapters.ts';
import { SeededRandom } from '../../src/core/time.ts';
import type { KeyedStateBackend } from '../../src/state/backend.ts';
import { ChangelogKeyedStateBackend } from '../../src/state/changelog/changelog-keyed-backend.ts';
import { CHANGELOG_STREAMS_ID } from '../../src/state/changelog/changelog-keyed-backend.ts';
import { EmbeddedKeyedStateBackend } from '../../src/state/embedded/embedded-keyed-backend.ts';
import { CHANGELOG_WRAPPED_INCREMENTS_SHARE_MAX } from '../../src/api/options/state-backend.ts';
import { changelogHandleKind, materializationBytes } from '../../src/state/handles/changelog.ts';
import { isKeyedHandleOf, keyedHandleSizes, type KeyedStateHandle } from '../../src/state/handles/registry.ts';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup } from '../../src/state/key-groups.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import type { CheckpointStreamFactory } from '../../src/storage/storage.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, type Figures } from '../lib/result.ts';

const SCENARIO = 'changelog';
const MAX_PARALLELISM = 128;
const ALL_GROUPS = { start: 0, end: MAX_PARALLELISM - 1 };
const args = parseScenarioArgs(process.argv.slice(2));
const quick = args.quick || process.env.WEIR_BENCH_QUICK === '1';
/** For profiling one variant over a shorter run: WEIR_BENCH_CHANGELOG_SECONDS (the figures of such a run are printed, not written). */
const secondsOverride = process.env.WEIR_BENCH_CHANGELOG_SECONDS === undefined ? null : Number(process.env.WEIR_BENCH_CHANGELOG_SECONDS);
if (secondsOverride !== null && !(secondsOverride > 0))
  throw new Error(`WEIR_BENCH_CHANGELOG_SECONDS must be a number of seconds > 0, got ${process.env.WEIR_BENCH_CHANGELOG_SECONDS}`);
/** To try another log share than the option's default: WEIR_BENCH_CHANGELOG_SHARE (the figures of such a run are printed, not written). */
const shareOverride = process.env.WEIR_BENCH_CHANGELOG_SHARE === undefined ? null : Number(process.env.WEIR_BENCH_CHANGELOG_SHARE);
if (shareOverride !== null && !(shareOverride > 0))
  throw new Error(`WEIR_BENCH_CHANGELOG_SHARE must be a number > 0, got ${process.env.WEIR_BENCH_CHANGELOG_SHARE}`);
/** To try another `incrementsShareMax` for the changelog's wrapped embedded backend: WEIR_BENCH_CHANGELOG_INNER_SHARE (printed, not written). */
const innerShareOverride = process.env.WEIR_BENCH_CHANGELOG_INNER_SHARE === undefined ? null : Number(process.env.WEIR_BENCH_CHANGELOG_INNER_SHARE);
if (innerShareOverride !== null && !(innerShareOverride > 0))
  throw new Error(`WEIR_BENCH_CHANGELOG_INNER_SHARE must be a number > 0, got ${process.env.WEIR_BENCH_CHANGELOG_INNER_SHARE}`);
const params = {
  quick,
  keys: quick ? 20_000 : 1_000_000,
  valueBytes: 100,
  updatesPerSec: quick ? 20_000 : 50_000,
  batch: 500,
  checkpointIntervalMs: quick ? 200 : 1000,
  materializationIntervalMs: quick ? 1000 : 60_000,
  /** The option's default: a materialization also starts once the log since the last passes its size. */
  materializationLogShareMax: shareOverride ?? 1,
  durationMs: secondsOverride !== null ? secondsOverride * 1000 : quick ? 3000 : 180_000,
  cacheEntriesMax: quick ? 5_000 : 100_000,
  statistic: 'checkpoint durations: p50 and p99 over the run; ratios: same-run figures of sequential variants',
};
const VARIANTS = ['changelog', 'incremental', 'heap-full'] as const;
type Variant = (typeof VARIANTS)[number];
for (const v of args.variants ?? [])
  if (!(VARIANTS as readonly string[]).includes(v)) throw new Error(`changelog: unknown variant ${v} (known: ${VARIANTS.join(', ')})`);
const chosen: readonly Variant[] = args.variants === null ? VARIANTS : VARIANTS.filter((v) => args.variants!.includes(v));

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);
const yieldTurn = yieldToEventLoop;

const mean = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Stream factories that count the bytes written through them. */
function counting(inner: CheckpointStreamFactory, written: { bytes: number }): CheckpointStreamFactory {
  return {
    checkpointId: inner.checkpointId,
    write: (scope, hint, data) => {
      written.bytes += data.byteLength;
      return inner.write(scope, hint, data);
    },
    ...(inner.writeParts === undefined
      ? {}
      : {
          writeParts: (scope, hint, parts) => {
            for (const p of parts) written.bytes += p.byteLength;
            return inner.writeParts!(scope, hint, parts);
          },
        }),
  };
}

function backendFor(variant: Variant, storage: FsCheckpointStorage, written: { bytes: number }, dir: string): KeyedStateBackend {
  const args = { uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM };
  if (variant === 'heap-full') return new HeapKeyedStateBackend(args);
  const options = { incremental: true, cacheEntriesMax: params.cacheEntriesMax, localDir: dir };
  if (variant === 'incremental') return new EmbeddedKeyedStateBackend(args, options);
  const embedded = new EmbeddedKeyedStateBackend(args, { ...options, incrementsShareMax: innerShareOverride ?? CHANGELOG_WRAPPED_INCREMENTS_SHARE_MAX });
  const settings = {
    uploadBytesThreshold: 10 * 1024 * 1024,
    uploadDelayMs: 10,
    uploadAttemptsMax: 3,
    uploadTimeoutMs: 30_000,
    inFlightBytesMax: 100 * 1024 * 1024,
    materializationIntervalMs: params.materializationIntervalMs,
    materializationLogShareMax: params.materializationLogShareMax,
  };
  const streams = counting(storage.streamFactory(CHANGELOG_STREAMS_ID), written);
  return new ChangelogKeyedStateBackend(embedded, settings, { streams, clock: systemClock, scheduler: realScheduler }, 'bench-0');
}

/** Bytes a checkpoint's handles refer to: what must be kept for it. */
const keptBytesOf = (handles: readonly KeyedStateHandle[]) => handles.reduce((n, h) => n + keyedHandleSizes(h).stateBytes, 0);

/** Of those, the changelog handles' materializations (the rest of their bytes is log). */
const materializedBytesOf = (handles: readonly KeyedStateHandle[]) =>
  handles.reduce((n, h) => n + (isKeyedHandleOf(h, changelogHandleKind) ? materializationBytes(h.materialization) : 0), 0);

const value = (k: number, n: number) => `${k}:${n}:`.padEnd(params.valueBytes, 'x');

function setKey(b: KeyedStateBackend, k: number): void {
  b.setCurrentKey(k, keyGroup(assignToKeyGroup(k, MAX_PARALLELISM)));
}

/**
 * The variant's steady updates and checkpoints, then a last checkpoint once the updates stopped; the
 * backend is disposed and out of reach when this returns, so the restore after it is timed as in a
 * fresh process (until 2026-12-05T22:30Z the running backend, its cache and change tracker, was
 * still alive beside the restore, and the collector marked it throughout).
 */
async function drive(variant: Variant, storage: FsCheckpointStorage, written: { bytes: number }, dir: string) {
  const backend = backendFor(variant, storage, written, dir);
  const descriptor = new ValueStateDescriptor<string>('v');
  const state = backend.getState<ValueState<string>>(descriptor);
  // The update number of each key's latest value (the value is `value(k, n)`): a typed array, not
  // a map of 1 M strings, so the bench's own bookkeeping adds nothing for the GC to mark.
  const expected = new Float64Array(params.keys);
  for (let k = 0; k < params.keys; k++) {
    setKey(backend, k);
    state.update(value(k, 0));
    expected[k] = 0;
    if (k % 10_000 === 0) await yieldTurn();
  }
  const random = new SeededRandom(27);
  const durations: number[] = [];
  let gapMax = 0;
  /** The longest gap with no checkpoint running: what the record path costs anyway (eviction, GC, a materialization's steps). */
  let quietGapMax = 0;
  let running = 0;
  let last: KeyedStateHandle[] = [];
  const keptBytes: number[] = [];
  const materializedBytes: number[] = [];
  let id = 0;
  let updates = 0;
  const start = performance.now();
  let nextCheckpoint = start + params.checkpointIntervalMs;
  let lastBatchEnd = start;
  let checkpointed = false;
  while (performance.now() - start < params.durationMs) {
    for (let i = 0; i < params.batch; i++) {
      const k = random.int(params.keys);
      const v = value(k, ++updates);
      setKey(backend, k);
      state.update(v);
      expected[k] = updates;
    }
    const now = performance.now();
    // A checkpoint was running since the last batch (or started and ran to its end within that turn).
    if (running > 0 || checkpointed) gapMax = Math.max(gapMax, now - lastBatchEnd);
    else quietGapMax = Math.max(quietGapMax, now - lastBatchEnd);
    checkpointed = false;
    lastBatchEnd = now;
    if (now >= nextCheckpoint && running === 0) {
      nextCheckpoint = now + params.checkpointIntervalMs;
      const cid = checkpointId(++id);
      const t0 = performance.now();
      const runner = backend.snapshot(cid, counting(storage.streamFactory(cid), written));
      running++;
      checkpointed = true;
      void runner.run(yieldTurn).then((handles) => {
        durations.push(performance.now() - t0);
        last = handles;
        keptBytes.push(keptBytesOf(handles));
        materializedBytes.push(materializedBytesOf(handles));
        backend.notifyCheckpointComplete(cid);
        running--;
      });
    }
    // Hold the steady rate: wait out what the batch got ahead of it.
    const aheadMs = (updates / params.updatesPerSec) * 1000 - (performance.now() - start);
    if (aheadMs > 1) await new Promise((r) => setTimeout(r, aheadMs));
    else await yieldTurn();
  }
  while (running > 0) await yieldTurn();
  // A last checkpoint after the updates stopped, so its restore must give exactly the state written.
  const final = checkpointId(++id);
  last = await backend.snapshot(final, counting(storage.streamFactory(final), written)).run(yieldTurn);
  backend.notifyCheckpointComplete(final);
  const stateBytes = keptBytesOf(last);
  // A materialization started by the log's size may still run in the background: the restore is
  // timed alone, as in a fresh process (before 2026-12-05 it was not, and competed with it).
  while (backend instanceof ChangelogKeyedStateBackend && backend.materializing) await yieldTurn();
  backend.dispose();
  return { last, stateBytes, expected, durations, gapMax, quietGapMax, keptBytes, materializedBytes };
}

async function runVariant(variant: Variant): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), `weir-bench-changelog-${variant}-`));
  try {
    const storage = new FsCheckpointStorage(join(dir, 'checkpoints'), jobId(variant));
    await storage.initialize();
    const written = { bytes: 0 };
    const { last, stateBytes, expected, durations, gapMax, quietGapMax, keptBytes, materializedBytes } = await drive(variant, storage, written, dir);
    (globalThis as { gc?: () => void }).gc?.();
    const t0 = performance.now();
    const fresh = new EmbeddedKeyedStateBackend(
      { uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM },
      { cacheEntriesMax: params.cacheEntriesMax, localDir: dir },
    );
    fresh.getState(new ValueStateDescriptor<string>('v'));
    await fresh.restore(last, (h) => storage.readState(h));
    const recoveryMs = performance.now() - t0;
    const restored = fresh.entries('v');
    const wrong = restored.filter(([k, v]) => value(k as number, expected[k as number]!) !== v).length;
    if (restored.length !== params.keys || wrong > 0) throw new Error(`${variant}: restored ${restored.length} keys, ${wrong} differ from the state written`);
    fresh.dispose();
    const figures = {
      checkpoints: durations.length,
      checkpoint_p50_ms: median(durations),
      checkpoint_p99_ms: percentile(durations, 99),
      bytes_per_checkpoint: durations.length === 0 ? 0 : written.bytes / durations.length,
      record_gap_max_ms: gapMax,
      record_gap_max_ms_quiet: quietGapMax,
      recovery_ms: recoveryMs,
      state_bytes: stateBytes,
      state_bytes_mean: mean(keptBytes),
      state_bytes_max: keptBytes.length === 0 ? 0 : Math.max(...keptBytes),
      ...(variant === 'changelog' ? { materialization_bytes_mean: mean(materializedBytes), log_bytes_mean: mean(keptBytes) - mean(materializedBytes) } : {}),
    };
    log(`${variant}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const metrics: Figures = {};
  const byVariant = new Map<Variant, Figures>();
  for (const variant of chosen) {
    const figures = await runVariant(variant);
    byVariant.set(variant, figures);
    for (const [name, v] of Object.entries(figures)) metrics[`${variant.replace('-', '_')}_${name}`] = v;
  }
  // Another share: the two ratios it is tried for, printed.
  if ((shareOverride !== null || innerShareOverride !== null) && byVariant.has('changelog') && byVariant.has('incremental')) {
    const [c, inc] = [byVariant.get('changelog')!, byVariant.get('incremental')!];
    log(
      `share ${shareOverride ?? params.materializationLogShareMax}, wrapped backend's increments share ${innerShareOverride ?? CHANGELOG_WRAPPED_INCREMENTS_SHARE_MAX}: recovery ${(c.recovery_ms! / inc.recovery_ms!).toFixed(2)}x, space ${(c.state_bytes! / inc.state_bytes!).toFixed(2)}x (mean ${(c.state_bytes_mean! / inc.state_bytes_mean!).toFixed(2)}x)`,
    );
  }
  // One variant, a shortened run or another share: figures printed above, no result file.
  if (args.variants !== null || secondsOverride !== null || shareOverride !== null || innerShareOverride !== null) return;
  const c = byVariant.get('changelog')!;
  const inc = byVariant.get('incremental')!;
  const ratios: Figures = {
    changelog_vs_incremental_p99: c.checkpoint_p99_ms! / inc.checkpoint_p99_ms!,
    changelog_vs_incremental_p50: c.checkpoint_p50_ms! / inc.checkpoint_p50_ms!,
    changelog_vs_incremental_recovery: c.recovery_ms! / inc.recovery_ms!,
    changelog_vs_incremental_space: c.state_bytes! / inc.state_bytes!,
    changelog_vs_incremental_space_mean: c.state_bytes_mean! / inc.state_bytes_mean!,
  };
  metrics.load_average_1m_end = loadavg()[0]!;
  publishResult(buildResult(SCENARIO, params, metrics, ratios), args.outDir);
}

runScenario(SCENARIO, main);
