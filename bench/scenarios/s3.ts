/**
 * s3: what checkpoints cost in S3-compatible storage against the local file system, on this
 * machine's loopback s3rver (the test server: a Node process writing to local disk, so the figures
 * say what the protocol and the client cost, not what a remote bucket's network does).
 *
 *   (a) s3_vs_fs_checkpoint_ms  the embedded backend with 1M keys of 100-byte values, 1% of the
 *                      keys changed between checkpoints: duration per checkpoint, full and
 *                      incremental, into `s3://bench/...` vs a checkpoint directory (files fsynced).
 *                      Two backends filled alike, their checkpoints interleaved (fs, s3, fs, s3, ...)
 *   (b) restore        the last full checkpoint and the incremental chain (base + 10 increments)
 *                      restored into a fresh embedded backend, from S3 and from the directory
 *   (c) upload         MB/s of one state object uploaded with parallel multipart parts (8 MiB, 4 in
 *                      flight) vs one single PUT, interleaved rounds
 *
 * Sizes shrink with `--quick` or WEIR_BENCH_S3_KEYS / WEIR_BENCH_S3_OBJECT_MB (a smoke run).
 * Timings are measured, never asserted; correctness is: restores hold every key, uploads read back
 * at their size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueStateDescriptor } from '../../src/index.ts';
import type { ValueState } from '../../src/index.ts';
import { checkpointId, jobId, keyGroup } from '../../src/core/ids.ts';
import { SeededRandom } from '../../src/core/time.ts';
import { EmbeddedKeyedStateBackend } from '../../src/state/embedded/embedded-keyed-backend.ts';
import { keyedHandleSizes, type KeyedStateHandle } from '../../src/state/handles/registry.ts';
import { assignToKeyGroup } from '../../src/state/key-groups.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import { S3Objects } from '../../src/storage/s3/objects.ts';
import { S3CheckpointStorage } from '../../src/storage/s3/s3-storage.ts';
import { s3Settings } from '../../src/storage/s3/settings.ts';
import type { CheckpointStorage } from '../../src/storage/storage.ts';
import { startS3rver } from '../../test/support/s3-server.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, seconds, startTimer, type Figures } from '../lib/result.ts';

const SCENARIO = 's3';
const MAX_PARALLELISM = 128;
const BUCKET = 'bench';
const MIB = 1024 * 1024;
const args = parseScenarioArgs(process.argv.slice(2));
if (args.variants !== null) throw new Error('s3: --variants is not supported');
const quick = args.quick;
const envInt = (key: string, fallback: number): number => (process.env[key] === undefined ? fallback : Number(process.env[key]));
const params = {
  quick,
  maxParallelism: MAX_PARALLELISM,
  checkpointKeys: envInt('WEIR_BENCH_S3_KEYS', quick ? 50_000 : 1_000_000),
  valueBytes: 100,
  changedShare: 0.01,
  incrementalCheckpoints: 10,
  cacheEntriesMax: 100_000,
  objectMiB: envInt('WEIR_BENCH_S3_OBJECT_MB', quick ? 24 : 128),
  partSizeMiB: 8,
  partsInFlightMax: 4,
  uploadRounds: quick ? 2 : 5,
  server: 's3rver on loopback (Node, local disk), path-style, no TLS',
  statistic: 'checkpoint ms: median over the 10 checkpoints after the first; restore: one each; MB/s: median over rounds; ratios: same-run figures',
};
if (!Number.isInteger(params.checkpointKeys) || params.checkpointKeys < 1000)
  throw new Error(`WEIR_BENCH_S3_KEYS must be an integer >= 1000, not ${process.env.WEIR_BENCH_S3_KEYS}`);
if (!Number.isInteger(params.objectMiB) || params.objectMiB < params.partSizeMiB * 2)
  throw new Error(`WEIR_BENCH_S3_OBJECT_MB must be an integer >= ${params.partSizeMiB * 2}, not ${process.env.WEIR_BENCH_S3_OBJECT_MB}`);

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();
const ALL_GROUPS = { start: 0, end: MAX_PARALLELISM - 1 };
const valueFor = (k: number, round: number): string => `${round}:${k}:`.padEnd(params.valueBytes, 'x');

type Where = 'fs' | 's3';

/** One embedded backend checkpointing into one storage. */
interface Subject {
  readonly where: Where;
  readonly storage: CheckpointStorage;
  readonly backend: EmbeddedKeyedStateBackend;
  readonly value: ValueState<string>;
  readonly ms: number[];
  last: KeyedStateHandle[];
}

function backendFor(incremental: boolean): { backend: EmbeddedKeyedStateBackend; value: ValueState<string> } {
  const backend = new EmbeddedKeyedStateBackend(
    { uid: 'bench', subtask: 0, keyGroupRange: ALL_GROUPS, maxParallelism: MAX_PARALLELISM },
    { incremental, cacheEntriesMax: params.cacheEntriesMax, incrementsShareMax: 1 },
  );
  return { backend, value: backend.getState<ValueState<string>>(new ValueStateDescriptor('v')) };
}

function put(s: Subject, k: number, round: number): void {
  s.backend.setCurrentKey(k, keyGroup(assignToKeyGroup(k, MAX_PARALLELISM)));
  s.value.update(valueFor(k, round));
}

async function checkpoint(s: Subject, id: number): Promise<number> {
  collectGarbage();
  const t0 = performance.now();
  s.last = await s.backend.snapshot(checkpointId(id), s.storage.streamFactory(checkpointId(id))).run();
  const ms = performance.now() - t0;
  s.backend.notifyCheckpointComplete(checkpointId(id));
  return ms;
}

/** Full or incremental checkpoints of the same state into the directory and the bucket, interleaved. */
async function checkpoints(incremental: boolean, fsRoot: string): Promise<Record<Where, Subject>> {
  const mode = incremental ? 'incremental' : 'full';
  const subjects: Subject[] = [];
  for (const where of ['fs', 's3'] as const) {
    const storage = where === 'fs' ? new FsCheckpointStorage(fsRoot, jobId(mode)) : new S3CheckpointStorage(`s3://${BUCKET}/chk`, jobId(mode));
    await storage.initialize();
    subjects.push({ where, storage, ...backendFor(incremental), ms: [], last: [] });
  }
  const fill = startTimer();
  for (let k = 0; k < params.checkpointKeys; k++) for (const s of subjects) put(s, k, 0);
  log(`${mode}: ${params.checkpointKeys.toLocaleString('en-US')} keys written into both backends in ${seconds(fill().ms)}`);
  const r = new SeededRandom(99);
  const changed = Math.ceil(params.checkpointKeys * params.changedShare);
  for (let id = 1; id <= params.incrementalCheckpoints + 1; id++) {
    if (id > 1) {
      for (let i = 0; i < changed; i++) {
        const k = r.int(params.checkpointKeys);
        for (const s of subjects) put(s, k, id);
      }
    }
    for (const s of subjects) {
      const ms = await checkpoint(s, id);
      // The first checkpoint is the base both modes write in full.
      if (id > 1) s.ms.push(ms);
      const bytes = s.last.map(keyedHandleSizes).reduce((a, x) => a + x.persistedBytes, 0);
      log(`${mode} checkpoint ${id} to ${s.where}: ${bytes.toLocaleString('en-US')} bytes persisted in ${ms.toFixed(0)} ms`);
    }
  }
  for (const s of subjects) s.backend.dispose();
  return { fs: subjects[0]!, s3: subjects[1]! };
}

async function restoreMs(s: Subject, label: string): Promise<number> {
  collectGarbage();
  const { backend, value } = backendFor(false);
  const t = startTimer();
  await backend.restore(s.last, (h) => s.storage.readState(h));
  const ms = t().ms;
  const keys = backend.keyCounts().v ?? 0;
  backend.setCurrentKey(12345 % params.checkpointKeys, keyGroup(assignToKeyGroup(12345 % params.checkpointKeys, MAX_PARALLELISM)));
  const probe = value.value();
  backend.dispose();
  if (keys !== params.checkpointKeys || probe === undefined || !probe.endsWith('x'))
    throw new Error(`restore of ${label} from ${s.where}: ${keys} keys (expected ${params.checkpointKeys}), probe ${probe}`);
  log(`restore of ${label} from ${s.where}: ${keys.toLocaleString('en-US')} keys in ${seconds(ms)}`);
  return ms;
}

/** MB/s of one object uploaded in parallel parts and in a single PUT, interleaved rounds. */
async function uploads(): Promise<{ multipart: number[]; single: number[] }> {
  const objects = new S3Objects(
    s3Settings({ multipartThresholdBytes: params.partSizeMiB * MIB, partSizeBytes: params.partSizeMiB * MIB, partsInFlightMax: params.partsInFlightMax }),
  );
  const bytes = params.objectMiB * MIB;
  const body = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4096) body[i] = i & 0xff;
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes; at += params.partSizeMiB * MIB) chunks.push(body.subarray(at, Math.min(bytes, at + params.partSizeMiB * MIB)));
  const out = { multipart: [] as number[], single: [] as number[] };
  for (let round = 1; round <= params.uploadRounds; round++) {
    for (const how of ['multipart', 'single'] as const) {
      const url = `s3://${BUCKET}/upload/${how}-${round}`;
      collectGarbage();
      const t = startTimer();
      if (how === 'multipart') await objects.putLarge(url, chunks);
      else await objects.put(url, body);
      const ms = t().ms;
      const size = await objects.head(url);
      if (size !== bytes) throw new Error(`${how} upload ${round}: ${size} bytes stored, expected ${bytes}`);
      await objects.deleteAll([url]);
      const mbPerSec = bytes / MIB / (ms / 1000);
      out[how].push(mbPerSec);
      log(`upload round ${round}, ${how}: ${params.objectMiB} MiB in ${ms.toFixed(0)} ms (${mbPerSec.toFixed(1)} MB/s)`);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const metrics: Figures = { load_average_1m_start: loadavg()[0]! };
  const ratios: Figures = {};
  const server = await startS3rver([BUCKET]);
  Object.assign(process.env, server.env);
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-s3-'));
  try {
    // (a), (b)
    const full = await checkpoints(false, dir);
    const incr = await checkpoints(true, dir);
    for (const where of ['fs', 's3'] as const) {
      metrics[`${where}_full_checkpoint_ms_median`] = median(full[where].ms);
      metrics[`${where}_incremental_checkpoint_ms_median`] = median(incr[where].ms);
      metrics[`${where}_restore_full_ms`] = await restoreMs(full[where], 'the full checkpoint');
      metrics[`${where}_restore_chain_ms`] = await restoreMs(incr[where], 'the incremental chain');
    }
    ratios.s3_vs_fs_checkpoint_ms_full = metrics.s3_full_checkpoint_ms_median! / metrics.fs_full_checkpoint_ms_median!;
    ratios.s3_vs_fs_checkpoint_ms_incremental = metrics.s3_incremental_checkpoint_ms_median! / metrics.fs_incremental_checkpoint_ms_median!;
    ratios.s3_vs_fs_restore_ms_full = metrics.s3_restore_full_ms! / metrics.fs_restore_full_ms!;
    ratios.s3_vs_fs_restore_ms_chain = metrics.s3_restore_chain_ms! / metrics.fs_restore_chain_ms!;

    // (c)
    const up = await uploads();
    metrics.upload_multipart_mb_per_sec = median(up.multipart);
    metrics.upload_single_put_mb_per_sec = median(up.single);
    ratios.upload_multipart_vs_single_put = median(up.multipart.map((m, i) => m / up.single[i]!));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  }
  metrics.load_average_1m_end = loadavg()[0]!;
  publishResult(buildResult(SCENARIO, params, metrics, ratios), args.outDir);
}

runScenario(SCENARIO, main);
