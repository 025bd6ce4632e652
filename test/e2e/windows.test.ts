import { describe, expect, it } from 'vitest';
import {
  CollectSink,
  ContinuousEventTimeTrigger,
  CountEvictor,
  CountTrigger,
  EventTimeSessionWindows,
  OutputTag,
  PurgingTrigger,
  SlidingEventTimeWindows,
  StreamEnvironment,
  TimeEvictor,
  ProcessingTimeSessionWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  ValueStateDescriptor,
} from '../../src/index.ts';
import type { AggregateFunction, DataStream, ProcessWindowFunction, TimeWindow } from '../../src/index.ts';
import { atEndOnly, type Ev, events, line, punctuated, referenceSessions, referenceWindows, sliding, sum, tumbling } from '../support/windows.ts';

const EVS = events(3_000, 10, 10, 60);

function env(parallelism = 2) {
  return StreamEnvironment.create({ parallelism, checkpointing: { intervalMs: 50 } });
}

function source(e: StreamEnvironment, strategy = atEndOnly(), evs: readonly Ev[] = EVS): DataStream<Ev> {
  // One subtask assigns timestamps and watermarks, chained to the source: the watermark after each
  // event is exactly the reference's, so which events are late is the same on every run.
  return e.fromCollection(evs).assignTimestampsAndWatermarks(strategy).setParallelism(1);
}

async function run<T>(e: StreamEnvironment, sink: CollectSink<T>): Promise<T[]> {
  const result = await e.execute('windows');
  expect(result.status).toBe('FINISHED');
  return sink.results();
}

type Out = { k: string; start: number; end: number; value: unknown };

/** Adds window metadata to an incremental result. */
const withWindow =
  <V>(): (() => ProcessWindowFunction<V, Out, string, TimeWindow>) =>
  () => ({
    process(key, ctx, elements, out) {
      for (const value of elements) out.collect({ k: key, start: ctx.window.start, end: ctx.window.end, value });
    },
  });

const average: AggregateFunction<Ev, [number, number], number> = {
  createAccumulator: () => [0, 0],
  add: (e, [s, n]) => [s + e.v, n + 1],
  getResult: ([s, n]) => s / n,
  merge: ([s1, n1], [s2, n2]) => [s1 + s2, n1 + n2],
};

describe('event-time windows on bounded input, against reference computations', () => {
  it('tumbling: reduce + process window function gives each (key, window) sum once', async () => {
    const e = env();
    const sink = new CollectSink<Out>();
    source(e)
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(100))
      .reduce((a, b) => ({ k: a.k, ts: Math.max(a.ts, b.ts), v: a.v + b.v }), withWindow<Ev>())
      .uid('win')
      .map((o) => ({ ...o, value: (o.value as Ev).v }))
      .sinkTo(sink);
    const got = (await run(e, sink)).map(line).sort();
    const want = referenceWindows(EVS, tumbling(100), null, 0, sum).firings.map(line).sort();
    expect(got).toEqual(want);
    expect(got.length).toBeGreaterThan(100);
  });

  it('tumbling: plain reduce and aggregate emit the window results', async () => {
    const e = env();
    const sums = new CollectSink<number>();
    const avgs = new CollectSink<number>();
    const keyed = source(e).keyBy((x) => x.k);
    keyed
      .window(TumblingEventTimeWindows.of(250))
      .reduce((a, b) => ({ k: a.k, ts: a.ts, v: a.v + b.v }))
      .map((x) => x.v)
      .sinkTo(sums);
    keyed.window(TumblingEventTimeWindows.of(250)).aggregate(average).sinkTo(avgs);
    const got = await run(e, sums);
    const ref = referenceWindows(EVS, tumbling(250), null, 0, (vs) => vs);
    expect(got.sort((a, b) => a - b)).toEqual(ref.firings.map((f) => sum(f.value)).sort((a, b) => a - b));
    expect(avgs.results().sort((a, b) => a - b)).toEqual(ref.firings.map((f) => sum(f.value) / f.value.length).sort((a, b) => a - b));
  });

  it('sliding: aggregate + process window function, each element in size/slide windows', async () => {
    const e = env(3);
    const sink = new CollectSink<Out>();
    source(e)
      .keyBy((x) => x.k)
      .window(SlidingEventTimeWindows.of(300, 100))
      .aggregate(average, withWindow<number>())
      .sinkTo(sink);
    const got = (await run(e, sink)).map(line).sort();
    const want = referenceWindows(EVS, sliding(300, 100), null, 0, (vs) => sum(vs) / vs.length)
      .firings.map(line)
      .sort();
    expect(got).toEqual(want);
  });

  it('sessions: out-of-order events bridge and merge sessions; process sees all elements, aggregate merges accumulators', async () => {
    // A key's events are about 100 ms apart, +-40 ms of disorder, against a 50 ms gap: some merge, some do not.
    // Key zz: two sessions, then an out-of-order event that bridges them into one.
    const bridge: Ev[] = [
      { k: 'zz', ts: 10_000, v: 1 },
      { k: 'zz', ts: 10_080, v: 2 },
      { k: 'zz', ts: 10_040, v: 3 },
    ];
    const evs = [...events(2_000, 10, 10, 40, 5), ...bridge];
    const e = env();
    const lists = new CollectSink<Out>();
    const avgs = new CollectSink<Out>();
    const keyed = source(e, atEndOnly(), evs).keyBy((x) => x.k);
    keyed
      .window(EventTimeSessionWindows.withGap(50))
      .process<Out>(() => ({
        process(key, ctx, elements, out) {
          out.collect({ k: key, start: ctx.window.start, end: ctx.window.end, value: elements.map((x) => x.v).sort((a, b) => a - b) });
        },
      }))
      .sinkTo(lists);
    keyed.window(EventTimeSessionWindows.withGap(50)).aggregate(average, withWindow<number>()).sinkTo(avgs);
    const got = (await run(e, lists)).map(line).sort();
    const sessions = referenceSessions(evs, 50);
    expect(got).toEqual(sessions.map((s) => line({ ...s, value: [...s.values].sort((a, b) => a - b) })).sort());
    expect(sessions.length).toBeGreaterThan(50);
    expect(sessions.filter((s) => s.values.length >= 2).length).toBeGreaterThan(10);
    expect(got).toContain(line({ k: 'zz', start: 10_000, end: 10_130, value: [1, 2, 3] }));
    expect(avgs.results().map(line).sort()).toEqual(sessions.map((s) => line({ ...s, value: sum(s.values) / s.values.length })).sort());
  });

  it('aggregate on sessions without merge is refused when the job is defined', () => {
    const e = env();
    const noMerge: AggregateFunction<Ev, number, number> = { createAccumulator: () => 0, add: (x, a) => a + x.v, getResult: (a) => a };
    expect(() =>
      source(e)
        .keyBy((x) => x.k)
        .window(EventTimeSessionWindows.withGap(10))
        .aggregate(noMerge),
    ).toThrow(/merge/);
  });
});

describe('count windows, triggers and evictors', () => {
  const perKey = (evs: readonly Ev[]) => {
    const m = new Map<string, number[]>();
    for (const x of evs) m.set(x.k, [...(m.get(x.k) ?? []), x.v]);
    return m;
  };

  it('countWindow(size): tumbling windows of 5 records per key; an incomplete last window never fires', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    source(e)
      .keyBy((x) => x.k)
      .countWindow(5)
      .process<string>(() => ({ process: (key, _ctx, els, out) => out.collect(`${key}:${els.map((x) => x.v).join(',')}`) }))
      .sinkTo(sink);
    const want: string[] = [];
    for (const [k, vs] of perKey(EVS)) for (let i = 0; i + 5 <= vs.length; i += 5) want.push(`${k}:${vs.slice(i, i + 5).join(',')}`);
    expect((await run(e, sink)).sort()).toEqual(want.sort());
  });

  it('countWindow(size, slide): the last 4 records per key every 2 records (count trigger + count evictor)', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    source(e)
      .keyBy((x) => x.k)
      .countWindow(4, 2)
      .reduce((a, b) => ({ k: a.k, ts: a.ts, v: a.v + b.v }))
      .map((x) => `${x.k}:${x.v}`)
      .sinkTo(sink);
    const want: string[] = [];
    for (const [k, vs] of perKey(EVS)) for (let n = 2; n <= vs.length; n += 2) want.push(`${k}:${sum(vs.slice(Math.max(0, n - 4), n))}`);
    expect((await run(e, sink)).sort()).toEqual(want.sort());
  });

  it('a purging count trigger on tumbling windows fires every 3 elements of a window and forgets them', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    source(e)
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(500))
      .trigger(PurgingTrigger.of(CountTrigger.of(3)))
      .process<string>(() => ({ process: (key, ctx, els, out) => out.collect(`${key}|${ctx.window.start}|${els.map((x) => x.v).join(',')}`) }))
      .sinkTo(sink);
    const want: string[] = [];
    const windows = new Map<string, number[]>();
    for (const x of EVS) {
      const id = `${x.k}|${x.ts - (x.ts % 500)}`;
      const vs = [...(windows.get(id) ?? []), x.v];
      if (vs.length === 3) {
        want.push(`${id}|${vs.join(',')}`);
        windows.set(id, []);
      } else windows.set(id, vs);
    }
    expect((await run(e, sink)).sort()).toEqual(want.sort());
  });

  it('a continuous event-time trigger gives early results every 100 ms of event time, then the final one', async () => {
    const e = env();
    const sink = new CollectSink<Out>();
    const evs = EVS.slice(0, 600);
    source(e, punctuated(0), evs)
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(1_000))
      .trigger(ContinuousEventTimeTrigger.of(100))
      .aggregate<number, number, Out>({ createAccumulator: () => 0, add: (_x, a) => a + 1, getResult: (a) => a }, withWindow<number>())
      .sinkTo(sink);
    const got = await run(e, sink);
    // Per window: counts rise across firings; the last firing of a window counts all its elements.
    const finals = new Map<string, number>();
    const firings = new Map<string, number>();
    for (const o of got) {
      const id = `${o.k}|${o.start}`;
      finals.set(id, Math.max(finals.get(id) ?? 0, o.value as number));
      firings.set(id, (firings.get(id) ?? 0) + 1);
    }
    const ref = referenceWindows(evs, tumbling(1_000), 0, 0, (vs) => vs.length).firings;
    expect(new Map(ref.map((f) => [`${f.k}|${f.start}`, f.value]))).toEqual(finals);
    expect(Math.max(...firings.values())).toBeGreaterThan(3);
  });

  it('evictors: count keeps the last 2 elements, time keeps the newest 20 ms of each firing window', async () => {
    const e = env();
    const counts = new CollectSink<string>();
    const times = new CollectSink<string>();
    const keyed = source(e).keyBy((x) => x.k);
    const show = () => (): ProcessWindowFunction<Ev, string, string, TimeWindow> => ({
      process: (key, ctx, els, out) => out.collect(`${key}|${ctx.window.start}|${els.map((x) => x.ts).join(',')}`),
    });
    keyed.window(TumblingEventTimeWindows.of(200)).evictor(CountEvictor.of(2)).process(show()).sinkTo(counts);
    keyed.window(TumblingEventTimeWindows.of(200)).evictor(TimeEvictor.of(20)).process(show()).sinkTo(times);
    await run(e, counts);
    const ref = referenceWindows(EVS, tumbling(200), null, 0, (vs) => vs).firings;
    const byWindow = new Map<string, number[]>();
    for (const x of EVS) {
      const id = `${x.k}|${x.ts - (x.ts % 200)}`;
      byWindow.set(id, [...(byWindow.get(id) ?? []), x.ts]);
    }
    expect(ref.length).toBe(byWindow.size);
    const wantCount = [...byWindow].map(([id, ts]) => `${id}|${ts.slice(-2).join(',')}`);
    const wantTime = [...byWindow].map(([id, ts]) => `${id}|${ts.filter((t) => t > Math.max(...ts) - 20).join(',')}`);
    expect(counts.results().sort()).toEqual(wantCount.sort());
    expect(times.results().sort()).toEqual(wantTime.sort());
  });
});

describe('lateness', () => {
  it('allowed lateness fires again with the updated result; later elements go to the late side output', async () => {
    // Bound 20 ms against 60 ms of disorder: many events are behind the watermark.
    const e = env();
    const results = new CollectSink<Out>();
    const lateSink = new CollectSink<Ev>();
    const lateTag = new OutputTag<Ev>('late');
    const windowed = source(e, punctuated(20))
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(100))
      .allowedLateness(30)
      .sideOutputLateData(lateTag)
      .aggregate<number, number, Out>({ createAccumulator: () => 0, add: (x, a) => a + x.v, getResult: (a) => a }, withWindow<number>())
      .uid('late-win');
    windowed.sinkTo(results);
    windowed.getSideOutput(lateTag).sinkTo(lateSink);
    await run(e, results);
    const ref = referenceWindows(EVS, tumbling(100), 20, 30, sum);
    expect(results.results().map(line).sort()).toEqual(ref.firings.map(line).sort());
    expect(
      lateSink
        .results()
        .map((x) => JSON.stringify(x))
        .sort(),
    ).toEqual(ref.late.map((x) => JSON.stringify(x)).sort());
    expect(ref.late.length).toBeGreaterThan(10);
    expect(ref.firings.length).toBeGreaterThan(new Set(ref.firings.map((f) => `${f.k}|${f.start}`)).size); // late firings happened
  });

  it('per-window state tells a late firing from the first; clear runs when the window is removed', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    source(e, punctuated(20))
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(100))
      .allowedLateness(30)
      .process<string>(() => {
        const firings = new ValueStateDescriptor<number>('firings', 0);
        return {
          process(key, ctx, els, out) {
            const n = ctx.windowState().getState(firings);
            n.update(n.value()! + 1);
            out.collect(`${key}|${ctx.window.start}|${n.value()}|${els.length}`);
          },
          clear(ctx) {
            ctx.windowState().getState(firings).clear();
          },
        };
      })
      .uid('firings')
      .sinkTo(sink);
    await run(e, sink);
    const ref = referenceWindows(EVS, tumbling(100), 20, 30, (vs) => vs.length).firings;
    const nth = new Map<string, number>();
    const want = ref.map((f) => {
      const id = `${f.k}|${f.start}`;
      const n = (nth.get(id) ?? 0) + 1;
      nth.set(id, n);
      return `${id}|${n}|${f.value}`;
    });
    expect(sink.results().sort()).toEqual(want.sort());
  });
});

describe('global state of a process window function', () => {
  it('is per key across windows: each firing sees how many windows of its key fired before', async () => {
    const e = env();
    const sink = new CollectSink<string>();
    source(e)
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(1_000))
      .process<string>(() => ({
        process(key, ctx, els, out) {
          const fired = ctx.globalState().getState(new ValueStateDescriptor<number>('fired', 0));
          out.collect(`${key}|${ctx.window.start}|${fired.value()}|${els.length}`);
          fired.update(fired.value()! + 1);
        },
      }))
      .sinkTo(sink);
    await run(e, sink);
    // With the watermark only at the end, each key's windows fire in order of their end (timer order).
    const ref = referenceWindows(EVS, tumbling(1_000), null, 0, (vs) => vs.length).firings;
    const byKey = new Map<string, number>();
    const want = [...ref]
      .sort((a, b) => a.start - b.start)
      .map((f) => {
        const n = byKey.get(f.k) ?? 0;
        byKey.set(f.k, n + 1);
        return `${f.k}|${f.start}|${n}|${f.value}`;
      });
    expect(sink.results().sort()).toEqual(want.sort());
  });
});

describe('processing-time windows', () => {
  it('tumbling processing-time windows fire on the job clock while the input lasts, each (key, window) once', async () => {
    // 1,500 records at 3,000/s: the input lasts at least half a second of the job's clock, so
    // 50 ms windows close while it runs. A bounded job's last open windows do not fire at its end.
    const e = env();
    const sink = new CollectSink<Out>();
    e.generate({ count: 1_500, ratePerSec: 3_000 }, (i) => ({ k: `k${i % 3}`, ts: 0, v: 1 }))
      .keyBy((x) => x.k)
      .window(TumblingProcessingTimeWindows.of(50))
      .aggregate<number, number, Out>({ createAccumulator: () => 0, add: (_x, a) => a + 1, getResult: (a) => a }, withWindow<number>())
      .sinkTo(sink);
    const got = await run(e, sink);
    expect(got.length).toBeGreaterThan(3);
    const ids = got.map((o) => `${o.k}|${o.start}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of got) {
      expect(o.end - o.start).toBe(50);
      expect(o.start % 50).toBe(0);
    }
    expect(got.reduce((n, o) => n + (o.value as number), 0)).toBeLessThanOrEqual(1_500);
  });

  it('processing-time sessions close after the gap without records', async () => {
    const e = env(1);
    const sink = new CollectSink<Out>();
    e.generate({ count: 400, ratePerSec: 2_000 }, (i) => ({ k: 'k', ts: 0, v: i }))
      .keyBy((x) => x.k)
      .window(ProcessingTimeSessionWindows.withGap(30))
      .aggregate<number, number, Out>({ createAccumulator: () => 0, add: (_x, a) => a + 1, getResult: (a) => a, merge: (a, b) => a + b }, withWindow<number>())
      .sinkTo(sink);
    // Records arrive every half millisecond or so: sessions stay open while the input lasts and
    // close only after a pause of 30 ms, so at most a few fire (on a loaded machine, a stall closes one).
    const got = await run(e, sink);
    for (const o of got) expect(o.end - o.start).toBeGreaterThanOrEqual(30);
    expect(got.reduce((n, o) => n + (o.value as number), 0)).toBeLessThanOrEqual(400);
  });
});
