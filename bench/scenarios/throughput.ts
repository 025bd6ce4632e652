/**
 * throughput: a keyed count over generated records with Zipf-skewed string keys, at parallelism 1.
 *
 *   loop             a hand-written loop over the same record function into a Map (the practical limit)
 *   weir             Weir, checkpointing off (only the final checkpoint a bounded job always takes)
 *   weir_checkpoint  the same job checkpointing every 1000 ms into a temporary directory
 *   db_ivm           the same workload on @tanstack/db-ivm (keyed reduce, no checkpointing), fed in batches
 *
 * The Weir job is what a real keyed count does: a keyed process function with ValueState<number>
 * that emits the updated [key, count] for every record, into a plain sink that counts what it gets.
 * db-ivm emits one consolidated change per key and batch (a retraction of the old count and the new
 * count), which is its natural output; its output callback likewise only counts.
 *
 * Verification, loud on any difference:
 * - A verification pass first (which also warms up the JIT) runs every variant once, untimed, at the
 *   full size with consumers that keep each key's latest count; those final counts must equal the
 *   loop's exactly, and their digests go into the result file.
 * - Timed runs use the counting consumers, which also keep a checksum that must match the loop's
 *   counts: Weir's sink sums the emitted counts (for a key with final count c: 1 + 2 + ... + c), and
 *   db-ivm's callback sums multiplicity * count over its changes (which telescopes to the records).
 *   A lookup per record in the sink would cost Weir about 15% of its time (measured with a profile),
 *   so the timed runs do not keep one.
 *
 * Timed variants are interleaved (loop, weir, weir_checkpoint, db_ivm, loop, ...) because absolute
 * speed drifts on shared machines; rates are medians over rounds, ratios medians of per-round ratios
 * of wall-clock rates. Records per CPU-second (this process, all threads) are reported beside them:
 * other processes' load inflates wall time much more than it inflates CPU time.
 * Checkpoint figures are for weir_checkpoint and include the final checkpoint of the bounded job.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { D2, MultiSet, map, output, reduce } from '@tanstack/db-ivm';
import { StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { CheckpointStats, KeyedProcessFunction, Sink, SinkWriter, ValueState } from '../../src/index.ts';
import { assertSameCounts, countsDigest, totalCount, type Counts } from '../lib/counts.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, seconds, startTimer, type Elapsed, type Figures } from '../lib/result.ts';
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
  checkpointIntervalMs: 1000,
  dbIvmBatchRecords: 10_000,
  statistic: 'records/s: median over rounds; ratios: median of per-round ratios',
};

/** Whether consumers keep each key's latest count (verification pass) or only count (timed runs). */
type Mode = 'verify' | 'timed';

interface RunOutcome extends Elapsed {
  /** Final count per key; only in the verification pass (and always for the loop). */
  readonly counts: Counts | null;
  /** Updates the variant emitted downstream (per record for Weir, per key and batch for db-ivm). */
  readonly updatesOut: number;
  /** Weir: sum of the emitted counts; db-ivm: sum of multiplicity * count over its changes. */
  readonly checksum: number;
  readonly checkpoints?: readonly CheckpointStats[];
}

// ---- (a) the hand-written loop ----

function runLoop(keyAt: KeyAt, records: number, seed: number): RunOutcome {
  const stop = startTimer();
  const counts = new Map<string, number>();
  for (let i = 0; i < records; i++) {
    const key = keyAt(i, seed);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return { ...stop(), counts, updatesOut: 0, checksum: records };
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

interface SinkTally {
  received: number;
  sumOfCounts: number;
  readonly latest: Map<string, number> | null;
}

/** A plain sink that counts updates (and, verifying, remembers each key's latest count). */
function countingSink(mode: Mode): { sink: Sink<[string, number]>; tally: SinkTally } {
  const tally: SinkTally = { received: 0, sumOfCounts: 0, latest: mode === 'verify' ? new Map() : null };
  const counting: SinkWriter<[string, number]> = {
    write(update) {
      tally.received++;
      tally.sumOfCounts += update[1];
    },
  };
  const verifying: SinkWriter<[string, number]> = {
    write(update) {
      tally.received++;
      tally.sumOfCounts += update[1];
      tally.latest!.set(update[0], update[1]);
    },
  };
  return { sink: { name: 'counting-sink', kind: 'plain', createWriter: () => (mode === 'verify' ? verifying : counting) }, tally };
}

async function runWeir(keyAt: KeyAt, records: number, seed: number, checkpointing: boolean, mode: Mode): Promise<RunOutcome> {
  const dir = checkpointing ? await mkdtemp(join(tmpdir(), 'weir-bench-')) : null;
  try {
    const env = StreamEnvironment.create({
      parallelism: params.parallelism,
      restartStrategy: { type: 'none' },
      checkpointing: dir ? { intervalMs: params.checkpointIntervalMs } : {},
      checkpointStorage: dir ?? 'memory',
    });
    const { sink, tally } = countingSink(mode);
    env
      .generate({ count: records, seed }, keyAt)
      .uid('keys')
      .keyBy((key) => key)
      .process(keyedCount)
      .uid('count')
      .sinkTo(sink)
      .uid('sink');
    const stop = startTimer();
    const result = await env.execute(checkpointing ? 'bench-throughput-checkpointing' : 'bench-throughput');
    const elapsed = stop();
    if (result.status !== 'FINISHED') throw new Error(`weir job ended ${result.status}`);
    if (tally.received !== records) throw new Error(`weir sink received ${tally.received} updates, expected ${records}`);
    return { ...elapsed, counts: tally.latest, updatesOut: tally.received, checksum: tally.sumOfCounts, checkpoints: result.checkpoints };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

// ---- (d) @tanstack/db-ivm ----

function runDbIvm(keyAt: KeyAt, records: number, seed: number, mode: Mode): RunOutcome {
  const stop = startTimer();
  const graph = new D2();
  const input = graph.newInput<string>();
  const latest = mode === 'verify' ? new Map<string, number>() : null;
  let changes = 0;
  let checksum = 0;
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
        checksum += multiplicity * n;
        if (latest === null) continue;
        if (multiplicity > 0) latest.set(key, n);
        else if (latest.get(key) === n) latest.delete(key);
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
  return { ...stop(), counts: latest, updatesOut: changes, checksum };
}

// ---- the rounds ----

const ALL_VARIANTS = ['loop', 'weir', 'weir_checkpoint', 'db_ivm'] as const;
type Variant = (typeof ALL_VARIANTS)[number];

/** The loop always runs: it is the reference every other variant is checked against. */
function selectedVariants(): readonly Variant[] {
  if (args.variants === null) return ALL_VARIANTS;
  for (const v of args.variants) {
    if (!(ALL_VARIANTS as readonly string[]).includes(v)) throw new Error(`unknown variant ${v} (known: ${ALL_VARIANTS.join(', ')})`);
  }
  return ALL_VARIANTS.filter((v) => v === 'loop' || args.variants!.includes(v));
}
const VARIANTS = selectedVariants();

function runVariant(variant: Variant, keyAt: KeyAt, mode: Mode): RunOutcome | Promise<RunOutcome> {
  const { records, seed } = params;
  switch (variant) {
    case 'loop':
      return runLoop(keyAt, records, seed);
    case 'weir':
      return runWeir(keyAt, records, seed, false, mode);
    case 'weir_checkpoint':
      return runWeir(keyAt, records, seed, true, mode);
    case 'db_ivm':
      return runDbIvm(keyAt, records, seed, mode);
  }
}

/** What a timed run's checksum must be, given the loop's final counts. */
function expectedChecksum(variant: Variant, reference: Counts): number {
  if (variant === 'weir' || variant === 'weir_checkpoint') {
    let sum = 0;
    for (const c of reference.values()) sum += (c * (c + 1)) / 2;
    return sum;
  }
  return totalCount(reference);
}

/** Lets garbage from one variant be collected before the next one's clock starts (with --expose-gc). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function completed(stats: readonly CheckpointStats[]): CheckpointStats[] {
  return stats.filter((s) => s.status === 'COMPLETED');
}

const log = (line: string) => process.stderr.write(`[${SCENARIO}] ${line}\n`);

function rateOf(outcome: RunOutcome): number {
  return params.records / (outcome.ms / 1000);
}

function cpuRateOf(outcome: RunOutcome): number {
  return params.records / (outcome.cpuMs / 1000);
}

/** Untimed: every variant's final counts must equal the loop's. Returns the loop's counts and the digests. */
async function verificationPass(keyAt: KeyAt): Promise<{ reference: Counts; digests: Partial<Record<Variant, number>> }> {
  let reference: Counts | null = null;
  const digests: Partial<Record<Variant, number>> = {};
  for (const variant of VARIANTS) {
    collectGarbage();
    const outcome = await runVariant(variant, keyAt, 'verify');
    const counts = outcome.counts!;
    if (variant === 'loop') {
      if (totalCount(counts) !== params.records) throw new Error(`loop counted ${totalCount(counts)} records, expected ${params.records}`);
      reference = counts;
    }
    assertSameCounts(`${variant} (verification pass)`, reference!, counts);
    if (outcome.checksum !== expectedChecksum(variant, reference!))
      throw new Error(`${variant} (verification pass): checksum ${outcome.checksum}, expected ${expectedChecksum(variant, reference!)}`);
    digests[variant] = countsDigest(counts);
    log(`verify ${variant}: final counts equal the loop's (${seconds(outcome.ms)}, untimed)`);
  }
  return { reference: reference!, digests };
}

async function main(): Promise<void> {
  const { keyAt } = zipfKeys(params.vocabulary, params.zipfS, params.seed);
  const { reference, digests } = await verificationPass(keyAt);

  const loadStart = loadavg()[0]!;
  const rates: Record<Variant, number[]> = { loop: [], weir: [], weir_checkpoint: [], db_ivm: [] };
  const cpuRates: Record<Variant, number[]> = { loop: [], weir: [], weir_checkpoint: [], db_ivm: [] };
  const updatesOut: Record<Variant, number> = { loop: 0, weir: 0, weir_checkpoint: 0, db_ivm: 0 };
  const checkpointCounts: number[] = [];
  const periodicCounts: number[] = [];
  const checkpointMedianMs: number[] = [];
  const checkpointBytes: number[] = [];

  for (let round = 1; round <= params.rounds; round++) {
    for (const variant of VARIANTS) {
      collectGarbage();
      const outcome = await runVariant(variant, keyAt, 'timed');
      const expected = expectedChecksum(variant, reference);
      if (outcome.checksum !== expected)
        throw new Error(`${variant} (round ${round}): checksum ${outcome.checksum}, expected ${expected}: counts differ from the loop's`);
      if (outcome.counts) assertSameCounts(`${variant} (round ${round})`, reference, outcome.counts);
      updatesOut[variant] = outcome.updatesOut;
      rates[variant].push(rateOf(outcome));
      cpuRates[variant].push(cpuRateOf(outcome));
      let extra = '';
      if (outcome.checkpoints) {
        const done = completed(outcome.checkpoints);
        const medianMs = median(done.map((s) => s.durationMs));
        if (variant === 'weir_checkpoint') {
          checkpointCounts.push(done.length);
          periodicCounts.push(done.filter((s) => !s.isFinal).length);
          checkpointMedianMs.push(medianMs);
          checkpointBytes.push(median(done.map((s) => s.persistedBytes)));
        }
        extra = `, ${done.length} checkpoints completed (median ${medianMs.toFixed(1)} ms)`;
      }
      log(
        `round ${round}/${params.rounds} ${variant}: ${seconds(outcome.ms)}, ${Math.round(rateOf(outcome)).toLocaleString('en-US')} records/s (${Math.round(cpuRateOf(outcome)).toLocaleString('en-US')} per CPU-s)${extra}`,
      );
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
    loop_records_per_cpu_sec: median(cpuRates.loop),
    weir_records_per_cpu_sec: median(cpuRates.weir),
    weir_checkpoint_records_per_cpu_sec: median(cpuRates.weir_checkpoint),
    db_ivm_records_per_cpu_sec: median(cpuRates.db_ivm),
    checkpoints_completed: median(checkpointCounts),
    periodic_checkpoints_completed: median(periodicCounts),
    checkpoint_duration_median_ms: median(checkpointMedianMs),
    checkpoint_persisted_bytes_median: median(checkpointBytes),
    load_average_1m_start: loadStart,
    load_average_1m_end: loadavg()[0]!,
    records: params.records,
    distinct_keys: reference.size,
    weir_updates_out: updatesOut.weir,
    db_ivm_changes_out: updatesOut.db_ivm,
    loop_counts_digest: digests.loop!,
    weir_counts_digest: digests.weir!,
    weir_checkpoint_counts_digest: digests.weir_checkpoint!,
    db_ivm_counts_digest: digests.db_ivm!,
  };
  const ratios: Figures = {
    weir_vs_loop: perRoundRatio('weir', 'loop'),
    checkpointing_vs_off: perRoundRatio('weir_checkpoint', 'weir'),
    weir_vs_db_ivm: perRoundRatio('weir', 'db_ivm'),
  };
  const result = buildResult(SCENARIO, params, metrics, ratios);
  publishResult(result, args.outDir);
}

runScenario(SCENARIO, main);
