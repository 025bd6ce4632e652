/**
 * Windows through failures, unaligned checkpoints and a savepoint rescale: the committed output is
 * each (key, window) result exactly once, whatever failed and wherever the job was restored.
 * The input has event times at most 19 ms out of order per source subtask and a 20 ms watermark
 * bound, so no record is late and every window fires once with all its records.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, OutputTag, StreamEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../src/index.ts';
import type { FaultSite } from '../../src/runtime/faults.ts';
import { whenRunning } from '../support/clients.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';
import { heldGenerate, type Hold, SourceGate } from '../support/held-source.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { baseOptions, tempDir } from '../support/jobs.ts';
import { type Ev, events, line, punctuated, referenceWindows, sum, tumbling } from '../support/windows.ts';

const N = 24_000;
const KEYS = 13;
const WINDOW_MS = 500;
interface Rec {
  readonly k: string;
  readonly ts: number;
  readonly v: number;
}
const record = (i: number): Rec => ({ k: `k${i % KEYS}`, ts: i + ((i * 37) % 20), v: i % 11 });

function expected(): string[] {
  const sums = new Map<string, number>();
  for (let i = 0; i < N; i++) {
    const r = record(i);
    const id = `${r.k}|${r.ts - (r.ts % WINDOW_MS)}`;
    sums.set(id, (sums.get(id) ?? 0) + r.v);
  }
  return [...sums].map(([id, s]) => `${id}|${s}`).sort();
}

const strategy = () =>
  WatermarkStrategy.forGenerator<Rec>(() => {
    let max = Number.NEGATIVE_INFINITY;
    return {
      onEvent(_r, ts, out) {
        if (ts > max) max = ts;
        out.emitWatermark(max - 20);
      },
      onPeriodicEmit() {},
    };
  }).withTimestampAssigner((r) => r.ts);

function windowJob(options: StreamEnvironmentOptions, hold: Hold, sink: CollectSink<string>): StreamEnvironment {
  const env = StreamEnvironment.create(options);
  heldGenerate(env, { count: N }, record, hold)
    .setParallelism(2)
    .uid('src')
    .name('src')
    .assignTimestampsAndWatermarks(strategy())
    .setParallelism(2)
    .uid('wm')
    .keyBy((r) => r.k)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .aggregate<number, number, string>({ createAccumulator: () => 0, add: (r, a) => a + r.v, getResult: (a) => a }, () => ({
      process: (key, ctx, sums, out) => out.collect(`${key}|${ctx.window.start}|${sums[0]}`),
    }))
    .uid('win')
    .name('win')
    .sinkTo(sink)
    .uid('sink');
  return env;
}

const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

describe('windows exactly-once through failures', () => {
  const want = expected();
  const pace: Hold = { recordsPerCheckpoint: 1_000 };

  it.each([
    ['process in the window operator', f('process', 'win', 30, 1)],
    ['sync phase of the window operator', f('sync-phase', 'win', 2, 0)],
    ['async phase of the window operator', f('async-phase', 'win', 3, 2)],
    ['process in the source', f('process', 'src', 8, 0)],
    ['before the ack of the window operator', f('before-ack', 'win', 2, 1)],
  ] as const)('recovers with each window result once: %s', async (_name, fault) => {
    const plan = new FaultPlan([fault]);
    const sink = new CollectSink<string>();
    const env = windowJob(baseOptions({ checkpointStorage: tempDir(), checkpointing: { intervalMs: 5 } }), pace, sink);
    const result = await env.execute('windows-faults', { faults: plan });
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(sink.results().sort()).toEqual(want);
  });

  it('the embedded backend (incremental checkpoints) recovers windows the same way', async () => {
    const plan = new FaultPlan([f('process', 'win', 30, 1)]);
    const sink = new CollectSink<string>();
    const env = windowJob(
      baseOptions({ checkpointStorage: tempDir(), stateBackend: 'embedded', incremental: true, checkpointing: { intervalMs: 5 } }),
      pace,
      sink,
    );
    const result = await env.execute('windows-embedded', { faults: plan });
    expect(result.restarts).toBe(1);
    expect(sink.results().sort()).toEqual(want);
  });

  it('unaligned checkpoints with a failure: persisted in-flight records and watermarks give the same windows', async () => {
    const plan = new FaultPlan([f('process', 'win', 40, 0)]);
    const sink = new CollectSink<string>();
    const env = windowJob(
      baseOptions({ checkpointStorage: tempDir(), checkpointing: { intervalMs: 5, unaligned: true }, bufferRecords: 16, channelCapacity: 2 }),
      pace,
      sink,
    );
    const result = await env.execute('windows-unaligned', { faults: plan });
    expect(result.restarts).toBe(1);
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(0);
    expect(sink.results().sort()).toEqual(want);
  });

  it.each(['heap', 'embedded'] as const)(
    'a savepoint with open windows and pending timers restores at parallelism 3 (from 2) with each window once (%s)',
    async (stateBackend) => {
      const root = tempDir();
      const sink = new CollectSink<string>();
      const gate = new SourceGate(N / 4);
      const first = windowJob(
        { ...baseOptions({ checkpointStorage: join(root, 'chk') }), stateBackend, parallelism: 2, restartStrategy: { type: 'none' } },
        { gate },
        sink,
      );
      const client = await first.executeAsync('windows-rescale');
      await whenRunning(client);
      await gate.reached(2);
      await client.triggerCheckpoint();
      const savepoint = await client.savepoint(join(root, 'sp'));
      await client.cancel();
      await client.result.catch(() => undefined);
      const meta = await readCheckpointMetadataAt(savepoint);
      const contents = await keyedStateAt(meta, 'win', 'window-contents');
      expect(contents.size).toBeGreaterThan(0); // windows still open in the savepoint
      const timers = await keyedStateAt(meta, 'win', '_timers/window-timers');
      expect(timers.size).toBeGreaterThan(0); // and their timers pending
      // Every open window of a key has its timer at its last millisecond (timer map keys end in the window namespace).
      for (const [key, windows] of contents) {
        const namespaces = [...(windows as Map<string, unknown>).keys()];
        const pending = [...((timers.get(key) as Map<string, unknown> | undefined)?.keys() ?? [])].map((t) => t.slice(t.indexOf('|') + 1));
        expect(pending.sort()).toEqual(namespaces.sort());
      }
      const committedBefore = sink.results().length;
      expect(committedBefore).toBeLessThan(want.length);
      const second = windowJob({ ...baseOptions({ checkpointStorage: join(root, 'chk2') }), stateBackend, parallelism: 3 }, {}, sink);
      const result = await second.execute('windows-rescaled', { restoreFrom: savepoint });
      expect(result.status).toBe('FINISHED');
      expect(sink.results().sort()).toEqual(want);
    },
  );
});

describe('late data through failures', () => {
  // One source subtask with a watermark after every event: which events are late is a function of
  // the input order alone, and the window operator's watermark survives restores, so late firings
  // and the late side output are those of the reference whatever fails where.
  const EVS = events(6_000, 10, 10, 60, 9);
  const ref = referenceWindows(EVS, tumbling(100), 20, 30, sum);

  it.each([
    ['process in the window operator', f('process', 'late-win', 40, 0)],
    ['process in the window operator, later', f('process', 'late-win', 150, 1)],
    ['sync phase of the window operator', f('sync-phase', 'late-win', 3, 1)],
    ['process in the source', f('process', 'late-src', 9, 0)],
  ] as const)('%s', async (_name, fault) => {
    const plan = new FaultPlan([fault]);
    const results = new CollectSink<string>();
    const late = new CollectSink<string>();
    const tag = new OutputTag<Ev>('late');
    const env = StreamEnvironment.create(baseOptions({ checkpointStorage: tempDir(), checkpointing: { intervalMs: 5 }, parallelism: 2 }));
    const windowed = heldGenerate(env, { count: EVS.length }, (i) => EVS[i]!, { recordsPerCheckpoint: 500 })
      .setParallelism(1)
      .uid('late-src')
      .name('late-src')
      .assignTimestampsAndWatermarks(punctuated(20))
      .setParallelism(1)
      .keyBy((x) => x.k)
      .window(TumblingEventTimeWindows.of(100))
      .allowedLateness(30)
      .sideOutputLateData(tag)
      .aggregate<number, number, string>({ createAccumulator: () => 0, add: (x, a) => a + x.v, getResult: (a) => a }, () => ({
        process: (key, ctx, sums, out) => out.collect(line({ k: key, start: ctx.window.start, end: ctx.window.end, value: sums[0] })),
      }))
      .uid('late-win')
      .name('late-win');
    windowed.sinkTo(results);
    windowed
      .getSideOutput(tag)
      .map((x) => JSON.stringify(x))
      .sinkTo(late);
    const result = await env.execute('late-faults', { faults: plan });
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(results.results().sort()).toEqual(ref.firings.map(line).sort());
    expect(late.results().sort()).toEqual(ref.late.map((x) => JSON.stringify(x)).sort());
  });
});
