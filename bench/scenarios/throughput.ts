/**
 * throughput: a keyed count over generated records with Zipf-skewed string keys, at parallelism 1.
 *
 *   loop             a hand-written loop over the same record function into a Map (the practical limit)
 *   weir             Weir, checkpointing off (only the final checkpoint a bounded job always takes)
 *   weir_checkpoint  the same job checkpointing every 1000 ms into a temporary directory
 *   db_ivm           the same workload on @tanstack/db-ivm (keyed reduce, no checkpointing), fed in batches
 *
 * The Weir job is what a real keyed count does: a keyed process function with ValueState<number>
 * that emits the updated [key, count] for every record. Its sink counts the updates it receives and
 * keeps the latest count per key (one Map.set per record) so that the final counts can be checked
 * against the loop's on every run. db-ivm emits one consolidated change per key per batch (a
 * retraction of the old count and the new count), which is its natural output.
 *
 * Variants are interleaved (loop, weir, weir_checkpoint, db_ivm, loop, ...) because absolute speed
 * drifts on shared machines; rates are medians over rounds, ratios are medians of per-round ratios.
 * Every run's final counts must equal the loop's, or the scenario throws. Checkpoint figures are
 * for weir_checkpoint and include the final checkpoint every bounded job takes before it finishes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { D2, MultiSet, map, output, reduce } from '@tanstack/db-ivm';
import { StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { CheckpointStats, KeyedProcessFunction, Sink, ValueState } from '../../src/index.ts';
import { assertSameCounts, countsDigest, totalCount, type Counts } from '../lib/counts.ts';
import { buildResult, median, parseScenarioArgs, printResult, seconds, writeResult, type Figures } from '../lib/result.ts';
import { zipfKeys, type KeyAt } from '../lib/zipf.ts';

const SCENARIO = 'throughput';

const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  records: args.quick ? 200_000 : 20_000_000,
  vocabulary: 10_000,
  zipfS: 1,
  seed: 42,
  parallelism: 1,
  rounds: args.quick ? 1 : 5,
  warmupRecords: args.quick ? 0 : 1_000_000,
  checkpointIntervalMs: 1000,
  dbIvmBatchRecords: 10_000,
  statistic: 'records/s: median over rounds; ratios: median of per-round ratios',
};

interface RunOutcome {
  readonly ms: number;
  readonly counts: Counts;
  /** Updates the variant emitted downstream (per record for Weir, per key and batch for db-ivm). */
  readonly updatesOut: number;
  readonly checkpoints?: readonly CheckpointStats[];
}

// ---- (a) the hand-written loop ----

function runLoop(keyAt: KeyAt, records: number, seed: number): RunOutcome {
  const start = performance.now();
  const counts = new Map<string, number>();
  for (let i = 0; i < records; i++) {
    const key = keyAt(i, seed);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return { ms: performance.now() - start, counts, updatesOut: 0 };
}

// ---- (b), (c) Weir ----

function keyedCount(): KeyedProcessFunction<string, string, [string, number]> {
  let count: ValueState<number>;
  return {
    open(ctx) {
      count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
    },
    processElement(key, _ctx, out) {
      const n = (count.value() ?? 0) + 1;
      count.update(n);
      out.collect([key, n]);
    },
  };
}

/** A plain sink that counts the updates and remembers each key's latest count (for verification). */
function countingSink(): { sink: Sink<[string, number]>; received: () => number; latest: Map<string, number> } {
  let received = 0;
  const latest = new Map<string, number>();
  const sink: Sink<[string, number]> = {
    name: 'counting-sink',
    kind: 'plain',
    createWriter: () => ({
      write(update) {
        received++;
        latest.set(update[0], update[1]);
      },
    }),
  };
  return { sink, received: () => received, latest };
}

async function runWeir(keyAt: KeyAt, records: number, seed: number, checkpointing: boolean): Promise<RunOutcome> {
  const dir = checkpointing ? await mkdtemp(join(tmpdir(), 'weir-bench-')) : null;
  try {
    const env = StreamEnvironment.create({
      parallelism: params.parallelism,
      restartStrategy: { type: 'none' },
      checkpointing: dir ? { intervalMs: params.checkpointIntervalMs } : {},
      checkpointStorage: dir ?? 'memory',
    });
    const { sink, received, latest } = countingSink();
    env
      .generate({ count: records, seed }, keyAt)
      .uid('keys')
      .keyBy((key) => key)
      .process(keyedCount)
      .uid('count')
      .sinkTo(sink)
      .uid('sink');
    const start = performance.now();
    const result = await env.execute(checkpointing ? 'bench-throughput-checkpointing' : 'bench-throughput');
    const ms = performance.now() - start;
    if (result.status !== 'FINISHED') throw new Error(`weir job ended ${result.status}`);
    if (received() !== records) throw new Error(`weir sink received ${received()} updates, expected ${records}`);
    return { ms, counts: latest, updatesOut: received(), checkpoints: result.checkpoints };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

// ---- (d) @tanstack/db-ivm ----

function runDbIvm(keyAt: KeyAt, records: number, seed: number): RunOutcome {
  const start = performance.now();
  const graph = new D2();
  const input = graph.newInput<string>();
  const counts = new Map<string, number>();
  let changes = 0;
  input.pipe(
    map((key: string) => [key, 1] as [string, number]),
    reduce((values: Array<[number, number]>) => {
      let n = 0;
      for (const [value, multiplicity] of values) n += value * multiplicity;
      return [[n, 1]];
    }),
    output((message) => {
      for (const [[key, n], multiplicity] of message.getInner()) {
        changes++;
        if (multiplicity > 0) counts.set(key, n);
        else if (counts.get(key) === n) counts.delete(key);
      }
    }),
  );
  graph.finalize();
  const batchRecords = params.dbIvmBatchRecords;
  for (let from = 0; from < records; from += batchRecords) {
    const to = Math.min(records, from + batchRecords);
    const batch: Array<[string, number]> = new Array(to - from);
    for (let i = from; i < to; i++) batch[i - from] = [keyAt(i, seed), 1];
    input.sendData(new MultiSet(batch));
    graph.run();
  }
  return { ms: performance.now() - start, counts, updatesOut: changes };
}

// ---- the rounds ----

const ALL_VARIANTS = ['loop', 'weir', 'weir_checkpoint', 'db_ivm'] as const;
type Variant = (typeof ALL_VARIANTS)[number];

/** The loop always runs: it is the reference every other variant's counts are checked against. */
function selectedVariants(): readonly Variant[] {
  if (args.variants === null) return ALL_VARIANTS;
  for (const v of args.variants) {
    if (!(ALL_VARIANTS as readonly string[]).includes(v)) throw new Error(`unknown variant ${v} (known: ${ALL_VARIANTS.join(', ')})`);
  }
  return ALL_VARIANTS.filter((v) => v === 'loop' || args.variants!.includes(v));
}
const VARIANTS = selectedVariants();

function runVariant(variant: Variant, keyAt: KeyAt, records: number, seed: number): RunOutcome | Promise<RunOutcome> {
  switch (variant) {
    case 'loop':
      return runLoop(keyAt, records, seed);
    case 'weir':
      return runWeir(keyAt, records, seed, false);
    case 'weir_checkpoint':
      return runWeir(keyAt, records, seed, true);
    case 'db_ivm':
      return runDbIvm(keyAt, records, seed);
  }
}

/** Lets garbage from one variant be collected before the next one's clock starts (with --expose-gc). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function completed(stats: readonly CheckpointStats[]): CheckpointStats[] {
  return stats.filter((s) => s.status === 'COMPLETED');
}

async function main(): Promise<void> {
  const { keyAt } = zipfKeys(params.vocabulary, params.zipfS, params.seed);
  const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);

  if (params.warmupRecords > 0) {
    for (const variant of VARIANTS) {
      collectGarbage();
      const outcome = await runVariant(variant, keyAt, params.warmupRecords, params.seed + 1);
      log(`warm-up ${variant}: ${seconds(outcome.ms)}`);
    }
  }

  const rates: Record<Variant, number[]> = { loop: [], weir: [], weir_checkpoint: [], db_ivm: [] };
  const updatesOut: Record<Variant, number> = { loop: 0, weir: 0, weir_checkpoint: 0, db_ivm: 0 };
  const digests = {} as Record<Variant, number>;
  const checkpointCounts: number[] = [];
  const periodicCounts: number[] = [];
  const checkpointMedianMs: number[] = [];
  const checkpointBytes: number[] = [];
  let reference: Counts | null = null;

  for (let round = 1; round <= params.rounds; round++) {
    for (const variant of VARIANTS) {
      collectGarbage();
      const outcome = await runVariant(variant, keyAt, params.records, params.seed);
      if (variant === 'loop') {
        if (totalCount(outcome.counts) !== params.records) throw new Error(`loop counted ${totalCount(outcome.counts)} records, expected ${params.records}`);
        reference ??= outcome.counts;
      }
      assertSameCounts(`${variant} (round ${round})`, reference!, outcome.counts);
      digests[variant] = countsDigest(outcome.counts);
      updatesOut[variant] = outcome.updatesOut;
      const rate = params.records / (outcome.ms / 1000);
      rates[variant].push(rate);
      let extra = '';
      if (outcome.checkpoints) {
        const done = completed(outcome.checkpoints);
        if (variant === 'weir_checkpoint') {
          checkpointCounts.push(done.length);
          periodicCounts.push(done.filter((s) => !s.isFinal).length);
          checkpointMedianMs.push(median(done.map((s) => s.durationMs)));
          checkpointBytes.push(median(done.map((s) => s.persistedBytes)));
        }
        extra = `, ${done.length} checkpoints completed (median ${median(done.map((s) => s.durationMs)).toFixed(1)} ms)`;
      }
      log(`round ${round}/${params.rounds} ${variant}: ${seconds(outcome.ms)}, ${Math.round(rate).toLocaleString('en-US')} records/s${extra}`);
    }
  }

  if (VARIANTS.length < ALL_VARIANTS.length) {
    log(`only ${VARIANTS.join(', ')} ran: no result file written`);
    return;
  }
  const perRoundRatio = (num: Variant, den: Variant) => median(rates[num].map((r, i) => r / rates[den][i]!));
  const metrics: Figures = {
    loop_records_per_sec: median(rates.loop),
    weir_records_per_sec: median(rates.weir),
    weir_checkpoint_records_per_sec: median(rates.weir_checkpoint),
    db_ivm_records_per_sec: median(rates.db_ivm),
    checkpoints_completed: median(checkpointCounts),
    periodic_checkpoints_completed: median(periodicCounts),
    checkpoint_duration_median_ms: median(checkpointMedianMs),
    checkpoint_persisted_bytes_median: median(checkpointBytes),
    records: params.records,
    distinct_keys: reference!.size,
    weir_updates_out: updatesOut.weir,
    db_ivm_changes_out: updatesOut.db_ivm,
    loop_counts_digest: digests.loop,
    weir_counts_digest: digests.weir,
    weir_checkpoint_counts_digest: digests.weir_checkpoint,
    db_ivm_counts_digest: digests.db_ivm,
  };
  const ratios: Figures = {
    weir_vs_loop: perRoundRatio('weir', 'loop'),
    checkpointing_vs_off: perRoundRatio('weir_checkpoint', 'weir'),
    weir_vs_db_ivm: perRoundRatio('weir', 'db_ivm'),
  };
  const result = buildResult(SCENARIO, params, metrics, ratios);
  const path = writeResult(result, args.outDir);
  printResult(result);
  console.log(`\nwritten to ${path}`);
}

main().catch((err: unknown) => {
  console.error(`[${SCENARIO}] FAILED:`, err);
  process.exit(1);
});
