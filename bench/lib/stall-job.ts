/**
 * The stall benchmark's job module (each task manager loads it): an unbounded generator, keyBy, a
 * process function writing a 100-byte value per key, a sink. The first STALL_KEYS records write
 * every key once (the fill); after that records update the last STALL_HOT_KEYS keys round and round,
 * which stay cached (no eviction writes mix into the figure). The process function appends every gap
 * of at least GAP_LOGGED_MS between two of its records to STALL_GAPS_FILE as "<end ms> <gap ms>"
 * lines (end as `performance.timeOrigin + performance.now()`, comparable across threads).
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { KeyedProcessFunction, Sink, ValueState } from '../../src/index.ts';

/** Gaps shorter than this are not logged (a figure below it reads "< GAP_LOGGED_MS"). */
export const GAP_LOGGED_MS = 5;
const VALUE_BYTES = 100;
const PAD = 'x'.repeat(VALUE_BYTES);

function keyedWrite(gapsFile: string): KeyedProcessFunction<number, number, number> {
  let value: ValueState<string>;
  let last = 0;
  let n = 0;
  return {
    open(ctx) {
      value = ctx.getState(new ValueStateDescriptor<string>('v'));
      last = performance.now();
    },
    processElement(key, _ctx, out) {
      const now = performance.now();
      if (now - last >= GAP_LOGGED_MS) appendFileSync(gapsFile, `${performance.timeOrigin + now} ${now - last}\n`);
      last = now;
      n++;
      value.update(`${key}:${n}:${PAD}`.slice(0, VALUE_BYTES));
      out.collect(1);
    },
  };
}

const sink: Sink<number> = { name: 'none', kind: 'plain', createWriter: () => ({ write: () => undefined }) };

export default function build(env: StreamEnvironment): void {
  const keys = Number(process.env.STALL_KEYS ?? 1_000_000);
  const hot = Number(process.env.STALL_HOT_KEYS ?? 50_000);
  const gapsFile = process.env.STALL_GAPS_FILE ?? '/dev/null';
  env
    .generate({ count: Number.POSITIVE_INFINITY, seed: 1 }, (i) => (i < keys ? i : keys - hot + (i % hot)))
    .uid('keys')
    .keyBy((k) => k)
    .process(() => keyedWrite(gapsFile))
    .uid('write')
    .sinkTo(sink)
    .uid('sink');
}
