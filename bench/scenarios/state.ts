/**
 * state: what checkpoints cost as state grows, and what the embedded backend costs per record.
 *
 *   (a) sync_pause     the synchronous part of a heap snapshot (the pause of the record path) with
 *                      10k, 100k and 1M keys, 1% of them changed between snapshots: median and p99
 *   (b) checkpoints    the embedded backend with 1M keys of 100-byte values, 1% of the keys changed
 *                      between checkpoints: bytes persisted and duration per checkpoint, incremental
 *                      vs full, into a checkpoint directory (files fsynced, as a job writes them)
 *   (c) restore        that state restored into a fresh embedded backend from the last full
 *                      checkpoint and from the incremental chain (base + 10 increments)
 *   (d) throughput     records/s of a keyed count job (ValueState per key, checkpoint every second),
 *                      heap vs embedded at 100k keys (the cache holds them all), interleaved rounds;
 *                      then embedded alone at 10M keys (the cache holds 1%: the store serves the rest)
 *   (e) scale          the same job at 1M keys (2 records per key), each backend alone in a child
 *                      process: peak RSS, peak V8 heap, peak external memory, CPU-seconds per
 *                      million records (process CPU, all threads: less load-sensitive than rates)
 *
 * (a)-(c) drive the backends directly (one subtask owning all 128 key groups) so the figures are
 * the backend's own; (d) and (e) run whole jobs. Timings are measured, never asserted; correctness is:
 * restores equal the state written, and every job's sink checksum equals the expected counts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueStateDescriptor } from '../../src/index.ts';
import type { ValueState } from '../../src/index.ts';
import { checkpointId, jobId, keyGroup } from '../../src/core/ids.ts';
import { SeededRandom } from '../../src/core/time.ts';
import type { KeyedStateBackend } from '../../src/state/backend.ts';
import { EmbeddedKeyedStateBackend } from '../../src/state/embedded/embedded-keyed-backend.ts';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup } from '../../src/state/key-groups.ts';
import { keyedHandleSizes, type KeyedStateHandle } from '../../src/state/handles/registry.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import { buildResult, keyTag, median, parseScenarioArgs, publishResult, runScenario, seconds, startTimer, type Figures } from '../lib/result.ts';
import { expectedChecksum, runStateJob, type StateBackendName } from '../lib/state-job.ts';
import { measureStateJob, type StateScaleFigures } from '../lib/state-scale-child.ts';

const SCENARIO = 'state';
const MAX_PARALLELISM = 128;
const args = parseScenarioArgs(process.argv.slice(2));
if (args.variants !== null) throw new Error('state: --variants is not supported');
const quick = args.quick;
const params = {
  quick,
  maxParallelism: MAX_PARALLELISM,
  syncPauseKeys: quick ? [10_000, 30_000, 100_000] : [10_000, 100_000, 1_000_000],
  syncPauseSamples: quick ? 50 : 300,
  changedShare: 0.01,
  checkpointKeys: quick ? 50_000 : 1_000_000,
  valueBytes: 100,
  incrementalCheckpoints: 10,
  cacheEntriesMax: 100_000,
  throughputKeys: quick ? 20_000 : 100_000,
  throughputRecords: quick ? 300_000 : 5_000_000,
  throughputRounds: quick ? 1 : 3,
  throughputCacheEntriesMax: quick ? 40_000 : 200_000,
  largeKeys: quick ? 200_000 : 10_000_000,
  largeRecordsPerKey: 1.2,
  scaleKeys: quick ? 100_000 : 1_000_000,
  scaleRecordsPerKey: 2,
  checkpointIntervalMs: 1000,
  statistic: 'pauses and durations: median and p99 over samples; records/s: median over rounds; ratios: same-run figures',
};

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function setKey(b: KeyedStateBackend, key: string | number): void {
  b.setCurrentKey(key, keyGroup(assignToKeyGroup(key, MAX_PARALLELISM)));
}

const ALL_GROUPS = { start: 0, end: MAX_PARALLELISM - 1 };

// ---- (a) sync-phase pause of the heap backend ----

interface PauseSubject {
  readonly keys: number;
  readonly backend: HeapKeyedStateBackend;
  readonly value: ValueState<number>;
  readonly random: SeededRandom;
  /** After 1% of the keys were written (the record path ran since the last snapshot). */
  readonly pauses: number[];
  /** Right after another snapshot: the same work with the CPU caches warm. */
  readonly warmPauses: number[];
}

const NO_STREAMS = { checkpointId: checkpointId(0), write: async () => ({ type: 'inline' as const, data: new Uint8Array(), checksum: 0 }) };

function pauseSubject(keys: number): PauseSubject {
  const backend = new HeapKeyedStateBackend({ uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM });
  const value = backend.getState<ValueState<number>>(new ValueStateDescriptor('v'));
  for (let k = 0; k < keys; k++) {
    setKey(backend, k);
    value.update(k);
  }
  return { keys, backend, value, random: new SeededRandom(keys), pauses: [], warmPauses: [] };
}

/** Times one sync part; the snapshot is then aborted (its async part is what (b) measures). */
function timeSyncPart(b: HeapKeyedStateBackend, id: number): number {
  const t0 = performance.now();
  b.snapshot(checkpointId(id), NO_STREAMS);
  const ms = performance.now() - t0;
  b.notifyCheckpointAborted(checkpointId(id));
  return ms;
}

/**
 * Every size lives at once and the samples go round-robin (10k, 100k, 1M, 10k, ...), so all sizes
 * share one process heap, one GC and one machine load; the first samples warm the JIT and are dropped.
 */
function syncPauses(): PauseSubject[] {
  const subjects = params.syncPauseKeys.map(pauseSubject);
  const warmup = 30;
  let id = 1;
  for (let s = 0; s < warmup + params.syncPauseSamples; s++) {
    for (const x of subjects) {
      const changed = Math.ceil(x.keys * params.changedShare);
      for (let i = 0; i < changed; i++) {
        setKey(x.backend, x.random.int(x.keys));
        x.value.update(s);
      }
      const cold = timeSyncPart(x.backend, id++);
      const warm = timeSyncPart(x.backend, id++);
      if (s < warmup) continue;
      x.pauses.push(cold);
      x.warmPauses.push(warm);
    }
  }
  for (const x of subjects) x.backend.dispose();
  return subjects;
}

// ---- (b) incremental vs full checkpoints, (c) restore ----

interface CheckpointFigures {
  readonly persisted: number[];
  readonly stateBytes: number[];
  readonly totalMs: number[];
  readonly syncMs: number[];
  readonly last: KeyedStateHandle[];
}

const valueFor = (k: number, round: number): string => `${round}:${k}:`.padEnd(params.valueBytes, 'x');

async function checkpoints(incremental: boolean, dir: string): Promise<CheckpointFigures> {
  const storage = new FsCheckpointStorage(dir, jobId(incremental ? 'incremental' : 'full'));
  await storage.initialize();
  const b = new EmbeddedKeyedStateBackend(
    { uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM },
    { incremental, cacheEntriesMax: params.cacheEntriesMax, incrementsShareMax: 1 },
  );
  const v = b.getState<ValueState<string>>(new ValueStateDescriptor('v'));
  const keys = params.checkpointKeys;
  const fill = startTimer();
  for (let k = 0; k < keys; k++) {
    setKey(b, k);
    v.update(valueFor(k, 0));
  }
  log(`${incremental ? 'incremental' : 'full'}: ${keys.toLocaleString('en-US')} keys written in ${seconds(fill().ms)}`);
  const figures: CheckpointFigures = { persisted: [], stateBytes: [], totalMs: [], syncMs: [], last: [] };
  const r = new SeededRandom(99);
  const changed = Math.ceil(keys * params.changedShare);
  let last: KeyedStateHandle[] = [];
  for (let id = 1; id <= params.incrementalCheckpoints + 1; id++) {
    if (id > 1) {
      for (let i = 0; i < changed; i++) {
        const k = r.int(keys);
        setKey(b, k);
        v.update(valueFor(k, id));
      }
    }
    const t0 = performance.now();
    const runner = b.snapshot(checkpointId(id), storage.streamFactory(checkpointId(id)));
    const syncMs = performance.now() - t0;
    last = await runner.run();
    const totalMs = performance.now() - t0;
    b.notifyCheckpointComplete(checkpointId(id));
    const sizes = last
      .map(keyedHandleSizes)
      .reduce((a, s) => ({ persistedBytes: a.persistedBytes + s.persistedBytes, stateBytes: a.stateBytes + s.stateBytes }), {
        persistedBytes: 0,
        stateBytes: 0,
      });
    if (id > 1) {
      // The first checkpoint is the base both variants write in full.
      figures.persisted.push(sizes.persistedBytes);
      figures.stateBytes.push(sizes.stateBytes);
      figures.totalMs.push(totalMs);
      figures.syncMs.push(syncMs);
    }
    log(
      `${incremental ? 'incremental' : 'full'} checkpoint ${id}: ${sizes.persistedBytes.toLocaleString('en-US')} bytes persisted of ${sizes.stateBytes.toLocaleString('en-US')}, sync ${syncMs.toFixed(2)} ms, total ${totalMs.toFixed(0)} ms`,
    );
  }
  b.dispose();
  return { ...figures, last };
}

async function restoreMs(handles: KeyedStateHandle[], dir: string, label: string): Promise<{ ms: number; keys: number; probe: string | undefined }> {
  const reader = new FsCheckpointStorage(dir, jobId('reader'));
  collectGarbage();
  const b = new EmbeddedKeyedStateBackend(
    { uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM },
    { cacheEntriesMax: params.cacheEntriesMax },
  );
  const t = startTimer();
  await b.restore(handles, (h) => reader.readState(h));
  const ms = t().ms;
  const keys = b.keyCounts().v ?? 0;
  setKey(b, 12345 % params.checkpointKeys);
  const probe = b.getState<ValueState<string>>(new ValueStateDescriptor('v')).value();
  b.dispose();
  log(`restore from ${label}: ${keys.toLocaleString('en-US')} keys in ${seconds(ms)}`);
  return { ms, keys, probe };
}

// ---- (d) keyed count throughput: bench/lib/state-job.ts; (e) memory and CPU at scale: bench/lib/state-scale-child.ts ----

async function main(): Promise<void> {
  const metrics: Figures = { load_average_1m_start: loadavg()[0]! };
  const ratios: Figures = {};

  // (a)
  const subjects = syncPauses();
  for (const x of subjects) {
    const tag = keyTag(x.keys);
    metrics[`heap_sync_pause_median_ms_${tag}`] = median(x.pauses);
    metrics[`heap_sync_pause_p99_ms_${tag}`] = percentile(x.pauses, 99);
    metrics[`heap_sync_pause_warm_median_ms_${tag}`] = median(x.warmPauses);
    log(
      `(a) heap sync pause at ${x.keys.toLocaleString('en-US')} keys: median ${median(x.pauses).toFixed(4)} ms, p99 ${percentile(x.pauses, 99).toFixed(4)} ms; right after another snapshot: median ${median(x.warmPauses).toFixed(4)} ms`,
    );
  }
  const [smallest, largest] = [subjects[0]!, subjects[subjects.length - 1]!];
  ratios.sync_pause_p99_1m_vs_10k = percentile(largest.pauses, 99) / percentile(smallest.pauses, 99);
  ratios.sync_pause_median_1m_vs_10k = median(largest.pauses) / median(smallest.pauses);
  ratios.sync_pause_warm_median_1m_vs_10k = median(largest.warmPauses) / median(smallest.warmPauses);

  // (b), (c)
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-state-'));
  try {
    collectGarbage();
    const incr = await checkpoints(true, dir);
    collectGarbage();
    const full = await checkpoints(false, dir);
    metrics.incremental_persisted_bytes_median = median(incr.persisted);
    metrics.full_persisted_bytes_median = median(full.persisted);
    metrics.incremental_state_bytes_median = median(incr.stateBytes);
    metrics.incremental_checkpoint_ms_median = median(incr.totalMs);
    metrics.full_checkpoint_ms_median = median(full.totalMs);
    metrics.incremental_checkpoint_ms_p99 = percentile(incr.totalMs, 99);
    metrics.full_checkpoint_ms_p99 = percentile(full.totalMs, 99);
    metrics.embedded_sync_pause_median_ms_incremental = median(incr.syncMs);
    metrics.embedded_sync_pause_median_ms_full = median(full.syncMs);
    metrics.embedded_sync_pause_max_ms = Math.max(...incr.syncMs, ...full.syncMs);
    ratios.incremental_vs_full_bytes = metrics.incremental_persisted_bytes_median / metrics.full_persisted_bytes_median;
    ratios.incremental_vs_full_checkpoint_ms = metrics.incremental_checkpoint_ms_median / metrics.full_checkpoint_ms_median;
    const chain = incr.last[0];
    if (chain?.type !== 'incremental-key-groups') throw new Error('the incremental backend did not return a chain');
    metrics.chain_files = chain.files.length;

    const fromFull = await restoreMs(full.last, dir, 'the full checkpoint');
    const fromChain = await restoreMs(incr.last, dir, `base + ${chain.files.length - 1} increments`);
    if (fromFull.keys !== params.checkpointKeys || fromChain.keys !== params.checkpointKeys)
      throw new Error(`restored ${fromFull.keys} and ${fromChain.keys} keys, expected ${params.checkpointKeys}`);
    if (fromFull.probe === undefined || fromChain.probe === undefined || !fromFull.probe.endsWith('x') || !fromChain.probe.endsWith('x'))
      throw new Error('a restored value is missing');
    metrics.restore_full_ms = fromFull.ms;
    metrics.restore_chain_ms = fromChain.ms;
    ratios.restore_chain_vs_full = fromChain.ms / fromFull.ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // (d)
  const { throughputKeys: keys, throughputRecords: records } = params;
  const expected = expectedChecksum(keys, records);
  const heapRates: number[] = [];
  const embeddedRates: number[] = [];
  for (let round = 1; round <= params.throughputRounds; round++) {
    for (const backend of ['heap', 'embedded'] as const) {
      const run = await runStateJob(backend, keys, records, params.throughputCacheEntriesMax, params.checkpointIntervalMs);
      if (run.checksum !== expected) throw new Error(`${backend} (round ${round}): checksum ${run.checksum}, expected ${expected}`);
      (backend === 'heap' ? heapRates : embeddedRates).push(run.recordsPerSec);
      log(
        `(d) round ${round} ${backend} at ${keys.toLocaleString('en-US')} keys: ${Math.round(run.recordsPerSec).toLocaleString('en-US')} records/s, ${run.checkpoints.length} checkpoints`,
      );
    }
  }
  metrics.heap_records_per_sec = median(heapRates);
  metrics.embedded_records_per_sec = median(embeddedRates);
  ratios.embedded_vs_heap_throughput = median(embeddedRates.map((e, i) => e / heapRates[i]!));

  const largeRecords = Math.round(params.largeKeys * params.largeRecordsPerKey);
  const large = await runStateJob('embedded', params.largeKeys, largeRecords, params.cacheEntriesMax, params.checkpointIntervalMs);
  if (large.checksum !== expectedChecksum(params.largeKeys, largeRecords))
    throw new Error('embedded at the large key count: checksum differs from the expected counts');
  metrics[`embedded_records_per_sec_${keyTag(params.largeKeys)}`] = large.recordsPerSec;
  metrics.embedded_large_checkpoints_completed = large.checkpoints.length;
  metrics.embedded_large_checkpoint_persisted_bytes_median = large.checkpoints.length > 0 ? median(large.checkpoints.map((c) => c.persistedBytes)) : 0;
  log(
    `(d) embedded at ${params.largeKeys.toLocaleString('en-US')} keys: ${Math.round(large.recordsPerSec).toLocaleString('en-US')} records/s, ${large.checkpoints.length} checkpoints`,
  );
  // (e) each backend alone in a child process at scaleKeys: peak RSS, peak V8 heap, CPU per record
  const scaleRecords = Math.round(params.scaleKeys * params.scaleRecordsPerKey);
  const scale: Partial<Record<StateBackendName, StateScaleFigures>> = {};
  for (const backend of ['heap', 'embedded'] as const) {
    const f = await measureStateJob(backend, params.scaleKeys, scaleRecords, params.cacheEntriesMax, params.checkpointIntervalMs);
    scale[backend] = f;
    const tag = `${backend}_${keyTag(params.scaleKeys)}`;
    metrics[`peak_rss_mb_${tag}`] = f.peakRssMb;
    metrics[`peak_heap_used_mb_${tag}`] = f.peakHeapUsedMb;
    metrics[`peak_external_mb_${tag}`] = f.peakExternalMb;
    metrics[`peak_rss_anon_mb_${tag}`] = f.peakRssAnonMb;
    metrics[`peak_rss_file_mb_${tag}`] = f.peakRssFileMb;
    metrics[`cpu_s_per_m_records_${tag}`] = f.cpuSecondsPerMillion;
    metrics[`records_per_sec_${tag}`] = f.recordsPerSec;
    log(
      `(e) ${backend} at ${params.scaleKeys.toLocaleString('en-US')} keys: peak RSS ${f.peakRssMb.toFixed(0)} MB, peak heap ${f.peakHeapUsedMb.toFixed(0)} MB, external ${f.peakExternalMb.toFixed(0)} MB, anon ${f.peakRssAnonMb.toFixed(0)} / file ${f.peakRssFileMb.toFixed(0)} MB, ${f.cpuSecondsPerMillion.toFixed(2)} CPU-s per M records, ${Math.round(f.recordsPerSec).toLocaleString('en-US')} records/s, ${f.checkpoints} checkpoints`,
    );
  }
  ratios[`embedded_vs_heap_peak_rss_${keyTag(params.scaleKeys)}`] = scale.embedded!.peakRssMb / scale.heap!.peakRssMb;
  ratios[`embedded_vs_heap_throughput_${keyTag(params.scaleKeys)}`] = scale.embedded!.recordsPerSec / scale.heap!.recordsPerSec;
  ratios[`embedded_vs_heap_cpu_per_record_${keyTag(params.scaleKeys)}`] = scale.embedded!.cpuSecondsPerMillion / scale.heap!.cpuSecondsPerMillion;

  metrics.load_average_1m_end = loadavg()[0]!;

  const result = buildResult(SCENARIO, params, metrics, ratios);
  publishResult(result, args.outDir);
}

runScenario(SCENARIO, main);
