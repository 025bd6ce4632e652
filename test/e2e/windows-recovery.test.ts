/**
 * Windows through failures, unaligned checkpoints and a savepoint rescale: the committed output is
 * each (key, window) result exactly once, whatever failed and wherever the job was restored.
 * The input has event times at most 19 ms out of order per source subtask and a 20 ms watermark
 * bound, so no record is late and every window fires once with all its records.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../src/index.ts';
import type { FaultSite } from '../../src/runtime/faults.ts';
import { whenRunning } from '../support/clients.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';
import { heldGenerate, type Hold, SourceGate } from '../support/held-source.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { baseOptions, tempDir } from '../support/jobs.ts';

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

  it('a savepoint with open windows and pending timers restores at parallelism 3 (from 2) with each window once', async () => {
    const root = tempDir();
    const sink = new CollectSink<string>();
    const gate = new SourceGate(N / 4);
    const first = windowJob({ ...baseOptions({ checkpointStorage: join(root, 'chk') }), parallelism: 2, restartStrategy: { type: 'none' } }, { gate }, sink);
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
    const second = windowJob({ ...baseOptions({ checkpointStorage: join(root, 'chk2') }), parallelism: 3 }, {}, sink);
    const result = await second.execute('windows-rescaled', { restoreFrom: savepoint });
    expect(result.status).toBe('FINISHED');
    expect(sink.results().sort()).toEqual(want);
  });
});
