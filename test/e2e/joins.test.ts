import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, EventTimeSessionWindows, StreamEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../../src/index.ts';
import type { ProcessJoinFunction } from '../../src/index.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { FaultPlan } from '../support/fault-plan.ts';
import { baseOptions, tempDir, until } from '../support/jobs.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { atEndOnly, type Ev, events } from '../support/windows.ts';

const A = events(800, 9, 10, 40, 3);
const B = events(600, 9, 13, 40, 4).map((e) => ({ ...e, v: e.v + 1_000 }));

function env() {
  return StreamEnvironment.create({ parallelism: 2, checkpointing: { intervalMs: 50 } });
}

describe('joins in time, against reference computations', () => {
  it('window join: every pair of the same key in the same tumbling window, once', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    const a = e.fromCollection(A).assignTimestampsAndWatermarks(atEndOnly());
    const b = e.fromCollection(B).assignTimestampsAndWatermarks(atEndOnly());
    a.join(b)
      .where((x) => x.k)
      .equalTo((y) => y.k)
      .window(TumblingEventTimeWindows.of(200))
      .apply((x, y) => `${x.k}|${x.ts}|${x.v}|${y.ts}|${y.v}`)
      .uid('wjoin')
      .sinkTo(sink);
    expect((await e.execute('window-join')).status).toBe('FINISHED');
    const want: string[] = [];
    for (const x of A)
      for (const y of B) if (x.k === y.k && Math.floor(x.ts / 200) === Math.floor(y.ts / 200)) want.push(`${x.k}|${x.ts}|${x.v}|${y.ts}|${y.v}`);
    expect(want.length).toBeGreaterThan(500);
    expect(sink.results().sort()).toEqual(want.sort());
  });

  it('window join on session windows: sessions merge across both sides', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    const sparseA: Ev[] = [
      { k: 'a', ts: 0, v: 1 },
      { k: 'a', ts: 100, v: 2 },
      { k: 'b', ts: 5, v: 3 },
    ];
    const sparseB: Ev[] = [
      { k: 'a', ts: 50, v: 10 }, // bridges a@0 and a@100 with gap 60
      { k: 'b', ts: 500, v: 30 }, // its own session: no pair
    ];
    e.fromCollection(sparseA)
      .assignTimestampsAndWatermarks(atEndOnly())
      .join(e.fromCollection(sparseB).assignTimestampsAndWatermarks(atEndOnly()))
      .where((x) => x.k)
      .equalTo((y) => y.k)
      .window(EventTimeSessionWindows.withGap(60))
      .apply((x, y) => `${x.k}:${x.v}+${y.v}`)
      .sinkTo(sink);
    expect((await e.execute('session-join')).status).toBe('FINISHED');
    expect(sink.results().sort()).toEqual(['a:1+10', 'a:2+10']);
  });

  it('interval join: each left record with the right records of its key in [ts - 30, ts + 20], with their times', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    const a = e
      .fromCollection(A)
      .assignTimestampsAndWatermarks(atEndOnly())
      .keyBy((x) => x.k);
    const b = e
      .fromCollection(B)
      .assignTimestampsAndWatermarks(atEndOnly())
      .keyBy((y) => y.k);
    a.intervalJoin(b)
      .between(-30, 20)
      .process(
        (): ProcessJoinFunction<Ev, Ev, string> => ({
          processElement(x, y, ctx, out) {
            expect(ctx.timestamp).toBe(Math.max(ctx.leftTimestamp, ctx.rightTimestamp));
            out.collect(`${x.k}|${x.ts}|${x.v}|${y.ts}|${y.v}`);
          },
        }),
      )
      .uid('ijoin')
      .sinkTo(sink);
    expect((await e.execute('interval-join')).status).toBe('FINISHED');
    const want: string[] = [];
    for (const x of A) for (const y of B) if (x.k === y.k && y.ts >= x.ts - 30 && y.ts <= x.ts + 20) want.push(`${x.k}|${x.ts}|${x.v}|${y.ts}|${y.v}`);
    expect(want.length).toBeGreaterThan(100);
    expect(sink.results().sort()).toEqual(want.sort());
  });

  it('interval join bounds are checked when the job is defined', () => {
    const e = env();
    const a = e.fromCollection(A).keyBy((x) => x.k);
    expect(() => a.intervalJoin(e.fromCollection(B).keyBy((y) => y.k)).between(10, -10)).toThrow(/lowerMs <= upperMs/);
  });
});

describe('interval join state', () => {
  it('is cleaned up by timers as the watermark passes: a savepoint mid-run holds only records that can still join', async () => {
    const root = tempDir();
    const gate = new SourceGate(4_000);
    const e = StreamEnvironment.create({ parallelism: 2, checkpointStorage: join(root, 'chk'), restartStrategy: { type: 'none' } });
    const rec = (i: number): Ev => ({ k: `k${i % 5}`, ts: i, v: i });
    const strategy = () => WatermarkStrategy.forMonotonousTimestamps<Ev>().withTimestampAssigner((x) => x.ts);
    const a = heldGenerate(e, { count: 100_000 }, rec, { gate })
      .uid('a')
      .assignTimestampsAndWatermarks(strategy())
      .keyBy((x) => x.k);
    const b = heldGenerate(e, { count: 100_000 }, rec, { gate })
      .uid('b')
      .assignTimestampsAndWatermarks(strategy())
      .keyBy((x) => x.k);
    a.intervalJoin(b)
      .between(-10, 10)
      .process((): ProcessJoinFunction<Ev, Ev, string> => ({ processElement: (x, y, _ctx, out) => out.collect(`${x.v}-${y.v}`) }))
      .uid('ijoin')
      .sinkTo(new CollectSink<string>());
    const client = await e.executeAsync('interval-join-cleanup');
    await whenRunning(client);
    await gate.reached(2);
    // Watermarks trail the sources by the periodic interval; give them time to reach the join.
    await until('the join has cleaned up', async () => {
      const meta = await readCheckpointMetadataAt(await client.savepoint(join(root, 'sp')));
      const left = await keyedStateAt(meta, 'ijoin', 'left-buffer');
      let buffered = 0;
      for (const byTs of left.values()) buffered += (byTs as Map<number, unknown>).size;
      return buffered > 0 && buffered < 400;
    });
    await client.cancel();
    await client.result.catch(() => undefined);
  });
});

describe('interval join through a failure', () => {
  it('emits every pair once after a failure in the join', async () => {
    const rec = (i: number): Ev => ({ k: `k${i % 7}`, ts: i, v: i });
    const strategy = () => WatermarkStrategy.forMonotonousTimestamps<Ev>().withTimestampAssigner((x) => x.ts);
    const plan = new FaultPlan([{ site: 'process', vertex: 'interval-join', nth: 40, subtask: 1 }]);
    const sink = new CollectSink<string>();
    const e = StreamEnvironment.create(baseOptions({ checkpointStorage: tempDir(), checkpointing: { intervalMs: 5 }, parallelism: 2 }));
    const side = (uid: string) =>
      heldGenerate(e, { count: 6_000 }, rec, { recordsPerCheckpoint: 400 })
        .uid(uid)
        .assignTimestampsAndWatermarks(strategy())
        .keyBy((x) => x.k);
    side('left')
      .intervalJoin(side('right'))
      .between(-20, 10)
      .process((): ProcessJoinFunction<Ev, Ev, string> => ({ processElement: (x, y, _ctx, out) => out.collect(`${x.v}-${y.v}`) }))
      .uid('ijoin')
      .sinkTo(sink);
    const result = await e.execute('interval-join-failure', { faults: plan });
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    const want: string[] = [];
    for (let a = 0; a < 6_000; a++) for (let b = Math.max(0, a - 20); b <= Math.min(5_999, a + 10); b++) if (a % 7 === b % 7) want.push(`${a}-${b}`);
    expect(sink.results().sort()).toEqual(want.sort());
  });
});
