import { describe, expect, it } from 'vitest';
import { CollectSink, OutputTag, StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { KeyedProcessFunction, ProcessFunction, ValueState } from '../../src/index.ts';

describe('side outputs', () => {
  it('splits a process function output into the main stream and two side outputs, each to its own sink', async () => {
    const env = StreamEnvironment.create({ parallelism: 2, checkpointing: { intervalMs: 20 } });
    const odd = new OutputTag<number>('odd');
    const big = new OutputTag<string>('big');
    const main = new CollectSink<number>();
    const odds = new CollectSink<number>();
    const bigs = new CollectSink<string>();
    const split = env
      .generate({ count: 2_000 }, (i) => i)
      .process(
        (): ProcessFunction<number, number> => ({
          processElement(i, ctx, out) {
            if (i % 2 === 1) ctx.output(odd, i);
            else out.collect(i);
            if (i >= 1_990) ctx.output(big, `big:${i}`);
          },
        }),
      )
      .uid('split');
    split.sinkTo(main);
    split
      .getSideOutput(odd)
      .map((i) => i * 10)
      .sinkTo(odds);
    split.getSideOutput(big).sinkTo(bigs);
    const result = await env.execute('side-outputs');
    expect(result.status).toBe('FINISHED');
    const all = Array.from({ length: 2_000 }, (_, i) => i);
    expect(main.results().sort((a, b) => a - b)).toEqual(all.filter((i) => i % 2 === 0));
    expect(odds.results().sort((a, b) => a - b)).toEqual(all.filter((i) => i % 2 === 1).map((i) => i * 10));
    expect(bigs.results().sort()).toEqual(all.filter((i) => i >= 1_990).map((i) => `big:${i}`));
    // The side outputs' consumers are not chained into the splitting operator: they are vertices of
    // their own, fed by writers of 'split'; its main-output sink is chained to it beside them.
    const vertices = env.jobGraph().vertices;
    const splitVertex = vertices.find((v) => v.chain.some((n) => n.uid === 'split'))!;
    const at = splitVertex.chain.findIndex((n) => n.uid === 'split');
    const chainedToSplit = splitVertex.chain.filter((_, k) => splitVertex.chainParents[k] === at);
    expect(chainedToSplit.map((n) => n.sink)).toEqual([main]);
    expect(splitVertex.outputs.map((e) => e.sideOutput).sort()).toEqual(['big', 'odd']);
    expect(splitVertex.outputs.every((e) => e.from === at)).toBe(true);
  });

  it('routes a keyed side output by key through keyBy downstream, and drops a side output nobody reads', async () => {
    const env = StreamEnvironment.create({ parallelism: 3, checkpointing: { intervalMs: 20 } });
    const firsts = new OutputTag<string>('first-of-key');
    const unread = new OutputTag<string>('unread');
    const counts = new CollectSink<string>();
    const keysSeen = new CollectSink<string>();
    const counted = env
      .generate({ count: 3_000 }, (i) => `k${i % 11}`)
      .keyBy((k) => k)
      .process((): KeyedProcessFunction<string, string, string> => {
        let n: ValueState<number>;
        return {
          open(ctx) {
            n = ctx.getState(new ValueStateDescriptor<number>('n', 0));
          },
          processElement(k, ctx, out) {
            const next = n.value()! + 1;
            n.update(next);
            if (next === 1) ctx.output(firsts, k);
            ctx.output(unread, k);
            if (next === 273) out.collect(`${k}:${next}`);
          },
        };
      })
      .uid('count');
    counted.sinkTo(counts);
    counted
      .getSideOutput(firsts)
      .keyBy((k) => k)
      .map((k) => `seen:${k}`)
      .sinkTo(keysSeen);
    const result = await env.execute('keyed-side-outputs');
    expect(result.status).toBe('FINISHED');
    expect(keysSeen.results().sort()).toEqual(Array.from({ length: 11 }, (_, i) => `seen:k${i}`).sort());
    // 3000 = 11 * 272 + 8: keys k0..k7 see 273 records, k8..k10 see 272.
    expect(counts.results().sort()).toEqual(Array.from({ length: 8 }, (_, i) => `k${i}:273`));
  });
});
