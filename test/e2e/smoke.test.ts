import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';

describe('smoke', () => {
  it('runs a keyed count to the end and commits its output', async () => {
    const env = StreamEnvironment.create({ parallelism: 2, checkpointing: { intervalMs: 20 } });
    const sink = new CollectSink<[string, number]>();
    env
      .generate({ count: 10_000 }, (i) => `k${i % 7}`)
      .keyBy((w) => w)
      .process(() => {
        let count: import('../../src/index.ts').ValueState<number>;
        return {
          open(ctx) {
            count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
          },
          processElement(word: string, _ctx, out) {
            const n = (count.value() ?? 0) + 1;
            count.update(n);
            out.collect([word, n] as [string, number]);
          },
        };
      })
      .uid('count')
      .sinkTo(sink);
    const result = await env.execute('smoke');
    expect(result.status).toBe('FINISHED');
    const out = sink.results();
    expect(out.length).toBe(10_000);
    const max = new Map<string, number>();
    for (const [w, n] of out) max.set(w, Math.max(max.get(w) ?? 0, n));
    expect([...max.values()].reduce((a, b) => a + b, 0)).toBe(10_000);
  });
});
