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
 */
import type { DataStream } from '../api/data-stream.ts';
import type { StreamEnvironment } from '../api/environment.ts';
import { OutputTag } from '../runtime/output-tag.ts';
import { WatermarkStrategy } from '../runtime/time/watermark-strategy.ts';
import { EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows, type WindowAssigner } from '../runtime/windows/assigners.ts';
import type { TimeWindow } from '../runtime/windows/window.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';

export type WindowScenario = 'window-tumbling' | 'window-sliding' | 'window-session';

/** A sequence record with its index in the split and its event time. */
export interface WindowRecord extends SeqRecord {
  readonly i: number;
  readonly ts: number;
}

export const WINDOW_LATENESS_MS = 100;
const BOUND_MS = 200;

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

/** The timed source: one split, parallelism 1, a watermark after every record. */
export function windowSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number): DataStream<WindowRecord> {
  const strategy = WatermarkStrategy.forGenerator<WindowRecord>(() => ({
    onEvent: (r, _ts, out) => out.emitWatermark(10 * r.i - BOUND_MS),
    onPeriodicEmit: () => {},
  })).withTimestampAssigner((r) => r.ts);
  return env
    .generate({ count: spec.count, ratePerSec }, (i): WindowRecord => ({ ...seqRecord(spec, i), i, ts: windowEventTime(i) }))
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
          for (const [sum, n] of results) out.collect(`W|${key}|${ctx.window.start}|${ctx.window.end}|${sum}|${n}`);
        },
      }),
    )
    .uid(uid)
    .name(kind);
  const late = results.getSideOutput(lateTag).map((r) => `L|${r.key}|${r.seq}`);
  return { results, late };
}
