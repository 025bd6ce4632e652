/**
 * Per-split watermarks in a job on the simulator's virtual clock: two splits read by one source
 * subtask, each with its own watermark generator and idleness. A split whose records arrive ahead
 * in event time does not make the other split's records late; a silent split stops holding the
 * watermark back after its idle timeout; a split that rejoins counts again at once, so its records
 * within the bound are on time; a restore from a checkpoint gives the same windows. Each case also
 * runs with the strategy after the source (one generator per subtask) to show what it prevents.
 */
import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import { CollectSink, OutputTag, SplitSourceReader, StreamEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../../src/index.ts';
import type { JobEvent, RuntimeContext, SourceReader, SourceSplit, SplitBatch, SplitReader, SplitSource, StreamEnvironmentOptions } from '../../src/index.ts';
import { InjectedFault } from '../../src/core/errors.ts';
import type { FaultInjector, FaultSite } from '../../src/runtime/faults.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';

interface Rec {
  readonly split: string;
  readonly ts: number;
  readonly v: number;
}

/** A split's records and the virtual time each becomes readable at. */
interface Script {
  readonly records: readonly Rec[];
  readonly arriveAtMs: readonly number[];
}

/**
 * Splits over scripted records: a fetch takes the next split in turn that has records readable by
 * the job's clock, up to `batch` of them; the position is the index of the next record.
 */
class ScriptedSplitSource implements SplitSource<Rec, SourceSplit, number> {
  readonly name = 'scripted-splits';
  readonly bounded = true;
  constructor(
    private readonly scripts: ReadonlyMap<string, Script>,
    private readonly batch = 8,
  ) {}
  enumerateSplits(): SourceSplit[] {
    return [...this.scripts.keys()].map((id, ordinal) => ({ id, ordinal }));
  }
  initialPosition(): number {
    return 0;
  }
  createSplitReader(ctx: RuntimeContext): SplitReader<Rec, SourceSplit, number> {
    const scripts = this.scripts;
    const batch = this.batch;
    let splits: Array<{ id: string; script: Script; next: number }> = [];
    let turn = 0;
    let closed = false;
    return {
      async open(assigned) {
        splits = assigned.map((a) => ({ id: a.split.id, script: scripts.get(a.split.id)!, next: a.position }));
      },
      async fetch(): Promise<SplitBatch<Rec, number> | null> {
        const live = splits.filter((s) => s.next < s.script.records.length);
        if (closed || live.length === 0) return null;
        const nowMs = ctx.clock.now();
        for (let k = 0; k < live.length; k++) {
          const s = live[(turn + k) % live.length]!;
          let end = s.next;
          while (end < s.script.records.length && end - s.next < batch && s.script.arriveAtMs[end]! <= nowMs) end++;
          if (end === s.next) continue;
          turn = (turn + k + 1) % live.length;
          const records = s.script.records.slice(s.next, end);
          const positions = records.map((_, i) => s.next + i + 1);
          s.next = end;
          return { splitId: s.id, records, positions, splitEnded: end === s.script.records.length };
        }
        return { splitId: live[0]!.id, records: [], positions: [] }; // nothing readable yet
      },
      close() {
        closed = true;
      },
    };
  }
  createReader(): SourceReader<Rec> {
    return new SplitSourceReader(this);
  }
}

/** The simulator's seed (seeds 1-7 pass too). */
const SEED = 7;
const BOUND_MS = 30;
const WINDOW_MS = 100;

function script(split: string, count: number, ts: (i: number) => number, arriveAtMs: (i: number) => number): [string, Script] {
  return [
    split,
    {
      records: Array.from({ length: count }, (_, i) => ({ split, ts: ts(i), v: (i * 7) % 13 })),
      arriveAtMs: Array.from({ length: count }, (_, i) => arriveAtMs(i)),
    },
  ];
}

/** Out of order by up to 15 ms: within the 30 ms bound. */
const disorder = (i: number): number => (i % 3 === 1 ? -15 : 0);

/** `split|window start|count|sum` of every window, each once (nothing is late). */
function expectedWindows(scripts: ReadonlyMap<string, Script>): string[] {
  const windows = new Map<string, { n: number; sum: number }>();
  for (const s of scripts.values())
    for (const r of s.records) {
      const id = `${r.split}|${Math.floor(r.ts / WINDOW_MS) * WINDOW_MS}`;
      const w = windows.get(id) ?? { n: 0, sum: 0 };
      w.n++;
      w.sum += r.v;
      windows.set(id, w);
    }
  return [...windows].map(([id, w]) => `${id}|${w.n}|${w.sum}`).sort();
}

interface Firing {
  readonly split: string;
  readonly end: number;
  readonly atMs: number;
  readonly watermarkMs: number;
  /** The highest timestamp each split had emitted when the window fired. */
  readonly emittedMax: Readonly<Record<string, number>>;
}

interface RunResult {
  readonly windows: string[];
  readonly late: Rec[];
  readonly firings: Firing[];
  readonly restarts: number;
  /** The checkpoint each attempt after the first restored from (null: it started empty). */
  readonly restoredFrom: Array<number | null>;
}

interface RunConfig {
  readonly scripts: ReadonlyMap<string, Script>;
  /** Per split (at the source, the default) or per subtask (assignTimestampsAndWatermarks after it). */
  readonly watermarksAt: 'source' | 'after-source';
  readonly idleTimeoutMs?: number;
  /** The strategy's out-of-orderness bound; default BOUND_MS. */
  readonly boundMs?: number;
  readonly faults?: readonly PlannedFault[];
  /** Fail the source subtask (attempt 0) at its first poll at or after this virtual time. */
  readonly failSourceAtMs?: number;
  /** Run the subtasks in this many in-memory task managers (serialized channels). */
  readonly taskManagers?: number;
}

/** Scripted splits (one source subtask) -> key by split -> tumbling windows (count, sum) + late side output. */
async function run(c: RunConfig): Promise<RunResult> {
  const world = new SimWorld(SEED, { stepCostMsMax: 1, slowProbability: 0, slowDelayMsMax: 0 });
  const options: StreamEnvironmentOptions = {
    parallelism: 2,
    autoWatermarkIntervalMs: 5,
    bufferRecords: 8,
    checkpointing: { intervalMs: 40 },
    restartStrategy: c.faults || c.failSourceAtMs !== undefined ? { type: 'fixed-delay', attempts: 3, delayMs: 10 } : { type: 'none' },
  };
  const env = StreamEnvironment.create(options);
  const emittedMax: Record<string, number> = {};
  let strategy = WatermarkStrategy.forBoundedOutOfOrderness<Rec>(c.boundMs ?? BOUND_MS).withTimestampAssigner((r) => {
    if (!(r.ts <= (emittedMax[r.split] ?? Number.NEGATIVE_INFINITY))) emittedMax[r.split] = r.ts;
    return r.ts;
  });
  if (c.idleTimeoutMs !== undefined) strategy = strategy.withIdleness(c.idleTimeoutMs);
  const source = new ScriptedSplitSource(c.scripts);
  const input =
    c.watermarksAt === 'source'
      ? env.fromSource(source, 'scripted', { watermarks: strategy }).setParallelism(1).uid('src')
      : env.fromSource(source, 'scripted').setParallelism(1).uid('src').assignTimestampsAndWatermarks(strategy).setParallelism(1).uid('wm');
  const lateTag = new OutputTag<Rec>('late');
  const firings: Firing[] = [];
  const windows = input
    .keyBy((r) => r.split)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .sideOutputLateData(lateTag)
    .aggregate<{ n: number; sum: number }, { n: number; sum: number }, string>(
      { createAccumulator: () => ({ n: 0, sum: 0 }), add: (r, a) => ({ n: a.n + 1, sum: a.sum + r.v }), getResult: (a) => a },
      () => ({
        process: (split, ctx, results, out) => {
          const w = ctx.window;
          firings.push({ split, end: w.end, atMs: ctx.currentProcessingTime(), watermarkMs: ctx.currentWatermark(), emittedMax: { ...emittedMax } });
          out.collect(`${split}|${w.start}|${results[0]!.n}|${results[0]!.sum}`);
        },
      }),
    )
    .uid('win')
    .name('win');
  const results = new CollectSink<string>();
  const lateSink = new CollectSink<Rec>();
  windows.sinkTo(results).uid('sink');
  windows.getSideOutput(lateTag).sinkTo(lateSink).uid('late-sink');
  const plan = c.faults ? new FaultPlan(c.faults) : undefined;
  let failedAtMs: number | null = null;
  const failAt: FaultInjector | undefined =
    c.failSourceAtMs === undefined
      ? undefined
      : {
          check(site, ctx) {
            if (site !== 'process' || !ctx.vertex.includes('scripted') || ctx.attempt !== 0 || failedAtMs !== null || world.now() < c.failSourceAtMs!) return;
            failedAtMs = world.now();
            throw new InjectedFault(`source at ${failedAtMs} ms`);
          },
        };
  const faults = plan ?? failAt;
  const restoredFrom: Array<number | null> = [];
  const onEvent = (e: JobEvent) => {
    if (e.type === 'running' && e.attempt > 0) restoredFrom.push(e.restoredFrom);
  };
  const client = await env.executeAsync('split-watermarks', { env: world.environment, faults, inMemoryTaskManagers: c.taskManagers, onEvent });
  let done = false;
  void client.result.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    world.step();
    await yieldToEventLoop();
  }
  const result = await client.result;
  expect(result.status).toBe('FINISHED');
  if (plan) expect(plan.fired.length).toBe(c.faults!.length);
  if (failAt) expect(failedAtMs).not.toBeNull();
  return { windows: results.results().sort(), late: lateSink.results(), firings, restarts: result.restarts, restoredFrom };
}

/** Both splits arrive at the same pace, but 'behind' is 2 s of event time behind 'ahead'. */
function skewed(): Map<string, Script> {
  return new Map([
    script(
      'ahead',
      600,
      (i) => 2_000 + 10 * i + disorder(i),
      (i) => i,
    ),
    script(
      'behind',
      600,
      (i) => 10 * i + disorder(i),
      (i) => i,
    ),
  ]);
}

/** The out-of-orderness bound of the sporadic scenario. */
const SPORADIC_BOUND_MS = 200;

/**
 * With a 200 ms bound: 'steady' sends 1 record per ms, 10 ms of event time each, for 1 s: the
 * watermark is about 5,800 at 600 ms. 'sporadic' sends 10 records, is silent from 10 ms to 600 ms,
 * then rejoins at 5,950 (above the watermark, but its own watermark 5,749 is below it) advancing
 * at 2 ms of event time per ms: far behind 'steady' soon after.
 */
function sporadic(): Map<string, Script> {
  return new Map([
    script(
      'steady',
      1_000,
      (i) => 10 * i + disorder(i),
      (i) => i,
    ),
    script(
      'sporadic',
      310,
      (i) => (i < 10 ? 10 * i : 5_950 + 2 * (i - 10) + (i % 3 === 1 ? -20 : 0)),
      (i) => (i < 10 ? i : 600 + (i - 10)),
    ),
  ]);
}
const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

describe('per-split watermarks (two splits on one source subtask, simulator clock)', () => {
  it('skewed splits: windows fire by the split behind, and none of its records is late', async () => {
    const scripts = skewed();
    const perSplit = await run({ scripts, watermarksAt: 'source' });
    expect(perSplit.late).toEqual([]);
    expect(perSplit.windows).toEqual(expectedWindows(scripts));
    // Every window fired once the split behind had passed its end by the bound (or had ended).
    const behindLastMs = scripts.get('behind')!.records.at(-1)!.ts;
    for (const firing of perSplit.firings) {
      if (firing.watermarkMs === Number.POSITIVE_INFINITY || firing.emittedMax.behind === behindLastMs) continue;
      expect(firing.emittedMax.behind!).toBeGreaterThanOrEqual(firing.end + BOUND_MS);
    }
    // ... and they fired while the input lasted, not only at its end.
    const whileRunning = perSplit.firings.filter((x) => x.watermarkMs !== Number.POSITIVE_INFINITY);
    expect(whileRunning.length).toBeGreaterThan(40);
    expect(Math.min(...whileRunning.map((x) => x.atMs))).toBeLessThan(300);

    // One generator for the subtask: the split ahead drives it and the records behind are late.
    const perSubtask = await run({ scripts, watermarksAt: 'after-source' });
    expect(perSubtask.late.length).toBeGreaterThan(300);
    expect(perSubtask.late.every((r) => r.split === 'behind')).toBe(true);
  });

  it('a silent split goes idle and the other drives the watermark; when it rejoins it counts again and its records within the bound are on time', async () => {
    const boundMs = SPORADIC_BOUND_MS;
    const scripts = sporadic();
    const idle = await run({ scripts, watermarksAt: 'source', idleTimeoutMs: 50, boundMs });
    expect(idle.late).toEqual([]);
    expect(idle.windows).toEqual(expectedWindows(scripts));
    // Silent 'sporadic' went idle: windows of 'steady' fired by its watermark during the silence.
    const duringSilence = idle.firings.filter((x) => x.atMs > 100 && x.atMs < 600);
    expect(duringSilence.length).toBeGreaterThan(20);
    expect(duringSilence.every((x) => x.emittedMax.sporadic! < 100)).toBe(true);
    // After it rejoined, 'sporadic' held the watermark again: no window fired past what it had sent.
    const sporadicLastMs = scripts.get('sporadic')!.records.at(-1)!.ts;
    const afterRejoin = idle.firings.filter((x) => x.atMs > 620 && x.watermarkMs !== Number.POSITIVE_INFINITY && x.emittedMax.sporadic !== sporadicLastMs);
    expect(afterRejoin.length).toBeGreaterThanOrEqual(5);
    for (const x of afterRejoin) expect(x.emittedMax.sporadic!).toBeGreaterThanOrEqual(x.end + boundMs);

    // Without idleness the silent split holds every window back until it sends again.
    const held = await run({ scripts, watermarksAt: 'source', boundMs });
    expect(held.windows).toEqual(expectedWindows(scripts));
    expect(held.firings.filter((x) => x.atMs > 100 && x.atMs < 600)).toEqual([]);

    // One generator for the subtask: after the rejoin 'steady' runs ahead and 'sporadic' is late.
    const perSubtask = await run({ scripts, watermarksAt: 'after-source', idleTimeoutMs: 50, boundMs });
    expect(perSubtask.late.length).toBeGreaterThan(100);
    expect(perSubtask.late.every((r) => r.split === 'sporadic')).toBe(true);
  });

  it('over two task managers (serialized channels) the same windows fire, with nothing late', async () => {
    const scripts = skewed();
    const overTaskManagers = await run({ scripts, watermarksAt: 'source', taskManagers: 2 });
    expect(overTaskManagers.late).toEqual([]);
    expect(overTaskManagers.windows).toEqual(expectedWindows(scripts));
    expect(overTaskManagers.firings.filter((x) => x.watermarkMs !== Number.POSITIVE_INFINITY).length).toBeGreaterThan(40);
  });

  it('a restore while a split is silent, then after it rejoined: every window once, nothing late', async () => {
    const scripts = sporadic();
    for (const failSourceAtMs of [300, 700]) {
      const restored = await run({ scripts, watermarksAt: 'source', idleTimeoutMs: 50, boundMs: SPORADIC_BOUND_MS, failSourceAtMs });
      expect(restored.restarts).toBe(1);
      expect(restored.restoredFrom).toEqual([expect.any(Number)]); // from a checkpoint, not empty
      expect(restored.late).toEqual([]);
      expect(restored.windows).toEqual(expectedWindows(scripts));
    }
  });

  it.each([
    ['the source subtask', f('process', 'scripted', 40, 0)],
    ['a window subtask', f('process', 'win', 30)],
  ] as const)('a restore after a failure in %s gives every window once, none of the records behind late', async (_name, fault) => {
    const scripts = skewed();
    const restored = await run({ scripts, watermarksAt: 'source', faults: [fault] });
    expect(restored.restarts).toBe(1);
    expect(restored.restoredFrom).toEqual([expect.any(Number)]); // from a checkpoint, not empty
    expect(restored.late).toEqual([]);
    expect(restored.windows).toEqual(expectedWindows(scripts));
  });
});
