/**
 * The simulator's window scenarios: tumbling, sliding and session windows in event time with
 * allowed lateness and a late-data side output, through every fault and mode. One source split
 * (its parallelism and tag stage fixed at 1, so a rescale moves only the window operator) gives
 * record i the event time `10 i` ± 60 ms and, after it, the watermark `10 i - 200`: the watermark
 * the window operator sees at each record is a function of the input order alone, and the window
 * operator keeps its watermark across restores. Every 37th record is 250 ms behind (late, within
 * the 100 ms allowed lateness of some windows: late firings) and every 53rd 1,000 ms behind (too
 * late for every window: the side output). So each (key, window) firing and each late record is
 * the same in every run: the committed output is compared, as a multiset, with the fault-free run.
 *
 * In the exactly-once modes an idle partition joins the window operator's input (under
 * at-least-once the unaligned barriers of a second input would let records be counted twice, as
 * at-least-once allows, and the sums would differ from the fault-free run's): a second source (one split, keys
 * `i0.*`) with `withIdleness` that sends a record `afterMs` of virtual time after each (re)start and
 * then every `afterMs`, three in all, and is idle in between. Its records and its watermark are
 * 1,000,000 ms behind, so after it went idle once it rejoins behind the combined watermark and never
 * counts in it again (watermark-valve.ts): from then on the window operator's watermark is the timed
 * split's alone. Until it first goes idle (5 virtual ms after it starts, at the next periodic tick),
 * a fresh channel from it holds the watermark back; the timed split emits nothing for 30 virtual
 * ms after each (re)start, so its records meet a watermark that idleness released, as in a run
 * without the idle partition. (Records of the timed split replayed from in-flight channel state
 * after a restore are not delayed.) Were idleness not honoured after a start or a restore, no
 * window would fire until the end of input, and late firings and late records would differ from
 * the fault-free run. The idle partition's own records are late, except one that reaches a window
 * operator restored (or started) with no watermark yet, before the timed split's first one: that
 * depends on timing, so their windows and late records are not reported.
 */
import type { DataStream } from '../api/data-stream.ts';
import type { StreamEnvironment } from '../api/environment.ts';
import { OutputTag } from '../runtime/output-tag.ts';
import { WatermarkStrategy } from '../runtime/time/watermark-strategy.ts';
import { EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows, type WindowAssigner } from '../runtime/windows/assigners.ts';
import type { TimeWindow } from '../runtime/windows/window.ts';
import { IndexedSource } from '../connectors/generator/indexed-source.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';
import { DelayedStartSource } from './sim-sources.ts';

export type WindowScenario = 'window-tumbling' | 'window-sliding' | 'window-session';

/** A sequence record with its index in the split and its event time. */
export interface WindowRecord extends SeqRecord {
  readonly i: number;
  readonly ts: number;
}

export const WINDOW_LATENESS_MS = 100;
const BOUND_MS = 200;
/** The timed split waits this long after each (re)start: the idle partition went idle by then. */
export const WINDOW_START_DELAY_MS = 30;
/** The idle partition marks itself idle after this long without a record. */
export const IDLE_PARTITION_TIMEOUT_MS = 5;
/** Records the idle partition sends in all. */
export const IDLE_PARTITION_RECORDS = 3;
/** Source name of the idle partition: its keys start with it. */
export const IDLE_PARTITION_SRC = 'i';
/** Event time of the idle partition's records: far behind every watermark the timed split emits. */
const IDLE_PARTITION_TS = -1_000_000;

/** Event time of record i: on time within ±60 ms, 250 ms behind (every 37th), or 1,000 ms behind (every 53rd). */
export function windowEventTime(i: number): number {
  if (i % 53 === 52) return 10 * i - 1_000;
  if (i % 37 === 36) return 10 * i - 250;
  return 10 * i + (((i * 104_729) % 13) - 6) * 10;
}

function assignerOf(kind: WindowScenario, keysPerSplit: number): WindowAssigner<WindowRecord, TimeWindow> {
  switch (kind) {
    case 'window-tumbling':
      return TumblingEventTimeWindows.of(100);
    case 'window-sliding':
      return SlidingEventTimeWindows.of(300, 100);
    case 'window-session':
      // A key's records are 10 * keysPerSplit ms apart ± 120: about half of them join the previous session.
      return EventTimeSessionWindows.withGap(Math.max(20, 10 * keysPerSplit));
  }
}

/** The timed source: one split, parallelism 1, a watermark after every record; nothing for `startDelayMs` after each (re)start. */
export function windowSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number, startDelayMs = 0): DataStream<WindowRecord> {
  const strategy = WatermarkStrategy.forGenerator<WindowRecord>(() => ({
    onEvent: (r, _ts, out) => out.emitWatermark(10 * r.i - BOUND_MS),
    onPeriodicEmit: () => {},
  })).withTimestampAssigner((r) => r.ts);
  const generated = new IndexedSource(
    'generate',
    { count: spec.count, ratePerSec },
    (i): WindowRecord => ({ ...seqRecord(spec, i), i, ts: windowEventTime(i) }),
  );
  return env
    .fromSource(startDelayMs > 0 ? new DelayedStartSource(generated, startDelayMs) : generated)
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`)
    .setParallelism(1)
    .assignTimestampsAndWatermarks(strategy)
    .uid(`timestamps-${spec.src}`)
    .setParallelism(1);
}

/** The idle partition: one split sending a record `afterMs` after each (re)start (then another, up to its count), idle in between. */
export function idlePartitionSource(env: StreamEnvironment, spec: SeqSourceSpec, afterMs: number): DataStream<WindowRecord> {
  const strategy = WatermarkStrategy.forBoundedOutOfOrderness<WindowRecord>(0)
    .withTimestampAssigner((r) => r.ts)
    .withIdleness(IDLE_PARTITION_TIMEOUT_MS);
  return env
    .generate({ count: spec.count, ratePerSec: 1000 / afterMs }, (i): WindowRecord => ({ ...seqRecord(spec, i), i, ts: IDLE_PARTITION_TS + i }))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`)
    .setParallelism(1)
    .assignTimestampsAndWatermarks(strategy)
    .uid(`timestamps-${spec.src}`)
    .setParallelism(1);
}

/**
 * Windows per key summing sequence numbers; each firing emits `W|key|start|end|sum|count`, each
 * record too late for every window `L|key|seq` on the late side output.
 */
export function windowStage(
  kind: WindowScenario,
  input: DataStream<WindowRecord>,
  keysPerSplit: number,
  uid: string,
): { results: DataStream<string>; late: DataStream<string> } {
  const lateTag = new OutputTag<WindowRecord>('late');
  const results = input
    .keyBy((r) => r.key)
    .window(assignerOf(kind, keysPerSplit))
    .allowedLateness(WINDOW_LATENESS_MS)
    .sideOutputLateData(lateTag)
    .aggregate<[number, number], [number, number], string>(
      {
        createAccumulator: () => [0, 0],
        add: (r, [sum, n]) => [sum + r.seq, n + 1],
        getResult: (acc) => acc,
        merge: ([s1, n1], [s2, n2]) => [s1 + s2, n1 + n2],
      },
      () => ({
        process: (key, ctx, results, out) => {
          if (key.startsWith(IDLE_PARTITION_SRC)) return;
          for (const [sum, n] of results) out.collect(`W|${key}|${ctx.window.start}|${ctx.window.end}|${sum}|${n}`);
        },
      }),
    )
    .uid(uid)
    .name(kind);
  const late = results
    .getSideOutput(lateTag)
    .filter((r) => r.origin !== IDLE_PARTITION_SRC)
    .map((r) => `L|${r.key}|${r.seq}`);
  return { results, late };
}
