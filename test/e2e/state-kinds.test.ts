import { describe, expect, it } from 'vitest';
import {
  AggregatingStateDescriptor,
  CollectSink,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  StreamEnvironment,
  ValueStateDescriptor,
} from '../../src/index.ts';
import type { AggregatingState, KeyedProcessFunction, ListState, MapState, ReducingState, ValueState } from '../../src/index.ts';
import { FaultPlan } from '../support/fault-plan.ts';
import { tempDir } from '../support/jobs.ts';

interface Reading {
  readonly sensor: string;
  readonly value: number;
}

/** Every kind of keyed state at once; each record emits a summary of all of them for its key. */
function allKinds(): KeyedProcessFunction<string, Reading, string> {
  let count: ValueState<number>;
  let recent: ListState<number>;
  let buckets: MapState<number, number>;
  let max: ReducingState<number>;
  let mean: AggregatingState<number, number>;
  return {
    open(ctx) {
      count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
      recent = ctx.getListState(new ListStateDescriptor<number>('recent'));
      buckets = ctx.getMapState(new MapStateDescriptor<number, number>('buckets'));
      max = ctx.getReducingState(new ReducingStateDescriptor<number>('max', (a, b) => Math.max(a, b)));
      mean = ctx.getAggregatingState(
        new AggregatingStateDescriptor('mean', {
          createAccumulator: () => ({ sum: 0, n: 0 }),
          add: (v: number, acc: { sum: number; n: number }) => ({ sum: acc.sum + v, n: acc.n + 1 }),
          getResult: (acc: { sum: number; n: number }) => Math.round((acc.sum / acc.n) * 100) / 100,
        }),
      );
    },
    processElement(r, ctx, out) {
      count.update(count.value()! + 1);
      const last = [...recent.get(), r.value].slice(-3);
      recent.update(last);
      const bucket = r.value % 5;
      buckets.put(bucket, (buckets.get(bucket) ?? 0) + 1);
      if (count.value()! % 10 === 0) buckets.remove(0);
      max.add(r.value);
      mean.add(r.value);
      out.collect(
        `${ctx.currentKey}|${count.value()}|${last.join(',')}|${[...buckets.entries()].sort((a, b) => a[0] - b[0]).join(';')}|${max.get()}|${mean.get()}`,
      );
    },
  };
}

async function run(faults?: FaultPlan): Promise<string[]> {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: tempDir(),
    checkpointing: { intervalMs: 10 },
    bufferRecords: 32,
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
  });
  const sink = new CollectSink<string>();
  env
    .generate({ count: 8000, ratePerSec: 40_000 }, (i): Reading => ({ sensor: `s${i % 13}`, value: (i * 37) % 101 }))
    .uid('readings')
    .setParallelism(1)
    .keyBy((r) => r.sensor)
    .process(allKinds)
    .uid('all-kinds')
    .name('all-kinds')
    .sinkTo(sink);
  await env.execute('state-kinds', { faults });
  return sink.results().sort();
}

describe('every kind of keyed state', () => {
  it('survives a failure: output equals the failure-free run', async () => {
    const clean = await run();
    expect(clean.length).toBe(8000);
    const plan = new FaultPlan([{ site: 'process', vertex: 'all-kinds', subtask: 1, nth: 5 }]);
    const recovered = await run(plan);
    expect(plan.fired.length).toBe(1);
    expect(recovered).toEqual(clean);
  });
});
