import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CollectSink, type StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import { heldGenerate, type Hold, type SourceGate } from './held-source.ts';
import type { KeyedCoProcessFunction, KeyedProcessFunction, StreamEnvironmentOptions, TwoPhaseCommitSink, ValueState } from '../../src/index.ts';

export function tempDir(prefix = 'weir-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TwoInputJobOptions {
  readonly countA: number;
  readonly countB: number;
  readonly keys: number;
  readonly ratePerSec?: number;
  /** Thrown from user code once, on attempt 0, at this record of input A of subtask 0. */
  readonly throwAtRecord?: number;
  /** Busy-waits this many microseconds per record in map-b, so input B lags (backpressure). */
  readonly slowBMicros?: number;
  /** Busy-waits this many microseconds per input-A record in the keyed operator, so A's queue into it stays full. */
  readonly slowKeyedAMicros?: number;
  /**
   * Each subtask of source A (B) emits at most `a` (`b`) records between two of its snapshots, so
   * the job takes checkpoints while its input lasts however loaded the machine (faults at the nth
   * snapshot or commit fire).
   */
  readonly recordsPerCheckpoint?: { readonly a: number; readonly b: number };
}

function spin(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // burn CPU: a slow operator
  }
}

export const KEYED_UID = 'per-key-counts';

/**
 * Two generated inputs, keyed by the same key and connected into a keyed two-input function that
 * counts records per key and input and emits `input:key:count`. Whatever the interleaving, the
 * multiset of outputs is the same, so a failure-free run is the oracle.
 */
export function buildTwoInputJob(env: StreamEnvironment, sink: CollectSink<string>, o: TwoInputJobOptions): void {
  const pace = o.recordsPerCheckpoint;
  const a = heldGenerate(env, { count: o.countA, ratePerSec: o.ratePerSec, seed: 1 }, (i) => ({ key: `k${(i * 7919) % o.keys}`, i }), {
    recordsPerCheckpoint: pace?.a,
  })
    .uid('source-a')
    .name('gen-a');
  const b = heldGenerate(env, { count: o.countB, ratePerSec: o.ratePerSec, seed: 2 }, (i) => ({ key: `k${(i * 104729) % o.keys}`, i }), {
    recordsPerCheckpoint: pace?.b,
  })
    .uid('source-b')
    .name('gen-b');
  const slow = o.slowBMicros ?? 0;
  const slowKeyedA = o.slowKeyedAMicros ?? 0;
  const mappedB = b
    .map((r) => {
      if (slow > 0) spin(slow);
      return r;
    })
    .name('map-b');
  a.keyBy((r) => r.key)
    .connect(mappedB.keyBy((r) => r.key))
    .process((): KeyedCoProcessFunction<string, { key: string; i: number }, { key: string; i: number }, string> => {
      let countA: ValueState<number>;
      let countB: ValueState<number>;
      let attempt = 0;
      let subtask = 0;
      let seen = 0;
      return {
        open(ctx) {
          countA = ctx.getState(new ValueStateDescriptor<number>('countA', 0));
          countB = ctx.getState(new ValueStateDescriptor<number>('countB', 0));
          attempt = ctx.attempt;
          subtask = ctx.subtaskIndex;
        },
        processElement1(_r, ctx, out) {
          if (o.throwAtRecord !== undefined && attempt === 0 && subtask === 0 && ++seen === o.throwAtRecord) {
            throw new Error(`user function failed at record ${seen}`);
          }
          if (slowKeyedA > 0) spin(slowKeyedA);
          const n = (countA.value() ?? 0) + 1;
          countA.update(n);
          out.collect(`A:${ctx.currentKey}:${n}`);
        },
        processElement2(_r, ctx, out) {
          const n = (countB.value() ?? 0) + 1;
          countB.update(n);
          out.collect(`B:${ctx.currentKey}:${n}`);
        },
      };
    })
    .uid(KEYED_UID)
    .name('keyed-co-process')
    .sinkTo(sink)
    .uid('collect-sink');
}

export function expectedCounts(o: TwoInputJobOptions): { a: Map<string, number>; b: Map<string, number>; outputs: string[] } {
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  const outputs: string[] = [];
  for (let i = 0; i < o.countA; i++) {
    const k = `k${(i * 7919) % o.keys}`;
    const n = (a.get(k) ?? 0) + 1;
    a.set(k, n);
    outputs.push(`A:${k}:${n}`);
  }
  for (let i = 0; i < o.countB; i++) {
    const k = `k${(i * 104729) % o.keys}`;
    const n = (b.get(k) ?? 0) + 1;
    b.set(k, n);
    outputs.push(`B:${k}:${n}`);
  }
  return { a, b, outputs };
}

export function baseOptions(extra: StreamEnvironmentOptions = {}): StreamEnvironmentOptions {
  return {
    parallelism: 3,
    checkpointing: { intervalMs: 20, ...extra.checkpointing },
    restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 10 },
    bufferRecords: 64,
    channelCapacity: 4,
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'checkpointing')),
  };
}

export function sortedCopy(xs: readonly string[]): string[] {
  return [...xs].sort();
}

/** A keyed count over string keys: ValueState 'n' per key, emits `key:n` for every record (spending `micros` on each, when given). */
export function keyedCount(micros = 0): KeyedProcessFunction<string, string, string> {
  let n: ValueState<number>;
  return {
    open(ctx) {
      n = ctx.getState(new ValueStateDescriptor<number>('n', 0));
    },
    processElement(k, _ctx, out) {
      if (micros > 0) spin(micros);
      n.update((n.value() ?? 0) + 1);
      out.collect(`${k}:${n.value()}`);
    },
  };
}

/** Polls `test` until it holds (state reached, not a count within a time): fails naming `what` after `timeoutMs`. */
export async function until(what: string, test: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const start = performance.now();
  while (!(await test())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What `keyedCount` emits for `count` records keyed `key-${(i * 7919) % keys}`: every key's running counts once, sorted. */
export function expectedRunningCounts(count: number, keys: number): string[] {
  const per = new Map<string, number>();
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const k = `key-${(i * 7919) % keys}`;
    const n = (per.get(k) ?? 0) + 1;
    per.set(k, n);
    out.push(`${k}:${n}`);
  }
  return out.sort();
}

/**
 * gen (`key-${(i * 7919) % keys}`, held by `gate` when given, else at `ratePerSec`) -> keyBy ->
 * keyedCount (uid 'count', `countMicros` a record: a slow consumer whose input queues are full
 * when a barrier arrives) -> sink (uid 'out'): the sink and cluster tests' job.
 */
export function buildKeyedCountJob(
  env: StreamEnvironment,
  sink: TwoPhaseCommitSink<string, unknown>,
  o: { count: number; keys: number; gate?: SourceGate; ratePerSec?: number; countMicros?: number },
): void {
  const key = (i: number) => `key-${(i * 7919) % o.keys}`;
  const generator = { count: o.count, ...(o.ratePerSec === undefined ? {} : { ratePerSec: o.ratePerSec }) };
  const source = o.gate === undefined ? env.generate(generator, key) : heldGenerate(env, generator, key, { gate: o.gate });
  source
    .uid('gen')
    .keyBy((k) => k)
    .process(() => keyedCount(o.countMicros))
    .uid('count')
    .name('count')
    .sinkTo(sink)
    .uid('out');
}

/** The backend tests' counts job: 20,000 records over 700 keys counted per key (operator name 'count'), its source held by `hold`. */
export function backendCountsJob(env: StreamEnvironment, sink: CollectSink<string>, hold: Hold): void {
  heldGenerate(env, { count: 20_000 }, (i) => `k${(i * 7919) % 700}`, hold)
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(sink);
}
