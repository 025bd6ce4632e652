import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import { buildExecutionPlan } from '../../src/graph/execution-plan.ts';

/** gen(2) -keyBy-> count(3) -rebalance-> sink(3), and a second source forward-connected into a map chain. */
function graph() {
  const env = StreamEnvironment.create({ parallelism: 3, maxParallelism: 8 });
  const a = env
    .generate({ count: 10 }, (i) => `k${i}`)
    .uid('a')
    .setParallelism(2);
  const b = env.generate({ count: 10 }, (i) => `k${i}`).uid('b');
  a.keyBy((x) => x)
    .connect(b.keyBy((x) => x))
    .process(() => ({
      processElement1: (x: string, _c: unknown, out: { collect(r: string): void }) => out.collect(x),
      processElement2: (x: string, _c: unknown, out: { collect(r: string): void }) => out.collect(x),
    }))
    .uid('join')
    .rebalance()
    .sinkTo(new CollectSink<string>())
    .uid('out');
  return env.jobGraph();
}

describe('execution plan', () => {
  const g = graph();
  const plan = buildExecutionPlan(g);
  const vertexOf = (uid: string) => g.vertices.find((v) => v.chain[0]!.uid === uid)!.index;

  it('has a channel from every producer subtask to every consumer subtask, and forward edges one to one', () => {
    const count = (from: number, to: number) => plan.channels.filter((c) => c.producer.vertex === from && c.consumer.vertex === to).length;
    expect(count(vertexOf('a'), vertexOf('join'))).toBe(2 * 3);
    expect(count(vertexOf('b'), vertexOf('join'))).toBe(3 * 3);
    expect(count(vertexOf('join'), vertexOf('out'))).toBe(3 * 3);
    expect(new Set(plan.channels.map((c) => c.id)).size).toBe(plan.channels.length);
  });

  it('orders a gate by input edge, then producer subtask, with the logical input of each', () => {
    const join = plan.subtasks.find((s) => s.vertex === vertexOf('join') && s.subtask === 1)!;
    expect(join.inputs.map((x) => x.channel)).toEqual([
      `${vertexOf('a')}.0->${vertexOf('join')}.1#0`,
      `${vertexOf('a')}.1->${vertexOf('join')}.1#0`,
      `${vertexOf('b')}.0->${vertexOf('join')}.1#0`,
      `${vertexOf('b')}.1->${vertexOf('join')}.1#0`,
      `${vertexOf('b')}.2->${vertexOf('join')}.1#0`,
    ]);
    expect(join.inputs.map((x) => x.input)).toEqual([0, 0, 1, 1, 1]);
  });

  it('orders a writer by consumer subtask and gives each subtask its key-group range', () => {
    const a1 = plan.subtasks.find((s) => s.vertex === vertexOf('a') && s.subtask === 1)!;
    expect(a1.outputs).toEqual([[0, 1, 2].map((d) => `${vertexOf('a')}.1->${vertexOf('join')}.${d}#0`)]);
    const ranges = plan.subtasks.filter((s) => s.vertex === vertexOf('join')).map((s) => s.keyGroupRange);
    expect(ranges).toEqual([
      { start: 0, end: 2 },
      { start: 3, end: 5 },
      { start: 6, end: 7 },
    ]);
  });
});
