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
 * With aligned exactly-once checkpoints an idle partition joins the window operator's input: a
 * second source (one split, keys `i0.*`) with `withIdleness` that sends a record `afterMs` of
 * virtual time after each (re)start and then every `afterMs`, three in all, and is idle in between.
 * Its records are 10^9 ms ahead and its watermark follows each of them, so once it sent one it
 * never holds the watermark back: rejoining, it is ahead of the combined watermark and the minimum
 * is the timed split's (watermark-valve.ts). Until it first goes idle or sends a record (its idle
 * timeout is 5 virtual ms, checked at each periodic tick), a fresh channel from it holds the
 * watermark back; the timed split emits nothing until 30 virtual ms after the idle partition's
 * reader opened in the same attempt (subtasks of a restarted or resumed job open up to tens of ms
 * apart), so its records meet a watermark that idleness released, as in a run without the idle
 * partition; and, when the idle partition emitted a barrier before it went idle, not before the timed
 * split emitted its own barrier of that checkpoint (or a newer one): until then the aligning window
 * operator holds the idle channel with the idle status behind that barrier (IdlePartitionOpenings). Were idleness not honoured after a start or a restore, the windows would fire only
 * once the idle partition sends a record or at the end of input, and late firings and late records
 * would differ from the fault-free run. The idle partition's own windows fire when the timed split
 * ended (or at the end of input), and a record of it that comes after the timed split ended while
 * it was idle is late: that depends on timing, so their windows and late records are not reported
 * (seed 227, window-sliding, exactly-once, found the first design, whose records were far behind,
 * wrong: a record of it that came before the timed split's first watermark rejoined the minimum
 * and held the watermark a million ms back until it went idle again).
 *
 * Not in the other modes. Under at-least-once the window operator does not align the two inputs'
 * barriers, so records after one barrier can be in the snapshot and be counted again after a
 * restore (as at-least-once allows): sums would differ from the fault-free run's. With unaligned
 * checkpoints (and aligned ones timing out to unaligned) a restore replays the timed split's
 * in-flight records at once, while the idle partition's fresh channel still holds the watermark
 * at the restored floor: they meet that floor instead of the timed split's watermarks that came
 * with them, and a late firing can merge into the first one (seed 29, window-sliding, unaligned,
 * lost one firing). Whether an input was idle is not part of a snapshot (nor in Flink's), so
 * after a restore an idle input counts again until it declares itself idle once more.
 */
import type { DataStream } from '../../api/data-stream.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import { OutputTag } from '../../runtime/output-tag.ts';
import type { Source } from '../../runtime/source.ts';
import { WatermarkStrategy } from '../../runtime/time/watermark-strategy.ts';
import { EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows, type WindowAssigner } from '../../runtime/windows/assigners.ts';
import type { TimeWindow } from '../../runtime/windows/window.ts';
import { IndexedSource } from '../../connectors/generator/indexed-source.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';
import { DelayedStartSource, type ReaderReports, ReportingSource } from './sim-sources.ts';

export type WindowScenario = 'window-tumbling' | 'window-sliding' | 'window-session';

/** A sequence record with its index in the split and its event time. */
export interface WindowRecord extends SeqRecord {
  readonly i: number;
  readonly ts: number;
}

export const WINDOW_LATENESS_MS = 100;
const BOUND_MS = 200;
/** The timed split waits this long after the idle partition opened, in each (re)start: the idle partition went idle by then. */
export const WINDOW_START_DELAY_MS = 30;
/** The idle partition marks itself idle after this long without a record. */
export const IDLE_PARTITION_TIMEOUT_MS = 5;
/** Records the idle partition sends in all. */
export const IDLE_PARTITION_RECORDS = 3;
/** Source name of the idle partition: its keys start with it. */
export const IDLE_PARTITION_SRC = 'i';
/** Event time of the idle partition's records: far ahead of every watermark the timed split emits. */
const IDLE_PARTITION_TS = 1_000_000_000;

/**
 * Event time of record i: on time within ±60 ms, 250 ms behind (every 37th), or 1,000 ms behind
 * (every 53rd); and every 30th, three records on the edges, right after a watermark one below a
 * multiple of 100 (`windowWatermark`): one in the window whose last millisecond that watermark is
 * (a late firing, i = 1 mod 30), one in the last millisecond of the tumbling window the watermark
 * just dropped, itself exactly the allowed lateness behind it (late, i = 11 mod 30), and one whose
 * newest sliding window the watermark just dropped (late, i = 21 mod 30). An off-by-one in
 * lateness or in the watermark changes what they do.
 */
export function windowEventTime(i: number): number {
  if (i % 53 === 52) return 10 * i - 1_000;
  if (i % 37 === 36) return 10 * i - 250;
  if (i >= 30 && i % 30 === 1) return 10 * i - 260;
  if (i >= 30 && i % 30 === 11) return 10 * i - 311;
  if (i >= 30 && i % 30 === 21) return 10 * i - 511;
  return 10 * i + (((i * 104_729) % 13) - 6) * 10;
}

/** The watermark after record i: 200 ms behind its index, and one below a multiple of 100 after every 10th record (a window's last millisecond). */
export function windowWatermark(i: number): number {
  return 10 * i - BOUND_MS - (i % 10 === 0 ? 1 : 0);
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

/** What one attempt's two sources did so far (see `IdlePartitionOpenings`). */
interface AttemptSources {
  /** When the idle partition's reader opened; null until it did. */
  openedAtMs: number | null;
  /** The newest checkpoint the idle partition emitted a barrier of before it surely went idle (0: none). */
  idleBarrier: number;
  /** The newest checkpoint the timed split emitted a barrier of (0: none). */
  timedBarrier: number;
  held: boolean;
}

/**
 * When the timed split of each attempt may start, per attempt of one process's job (every subtask
 * of an attempt runs in the process that built the job): WINDOW_START_DELAY_MS after the idle
 * partition's reader opened, once the idle partition surely declared itself idle; and, if the
 * idle partition emitted a barrier before that, only once the timed split emitted a barrier of
 * the same or a newer checkpoint. Aligned, the window operator holds the idle partition's channel
 * from that barrier until the timed channel's barrier arrives or the checkpoint is aborted, and
 * with it the idle status behind the barrier: its channel, active without a watermark, holds the
 * window operator's watermark at the minimum, and timed records arriving meanwhile would not fire
 * or be late as in the fault-free run. A lost or late trigger of the timed split did that for a
 * whole attempt (seed 198, window-sliding and window-tumbling, exactly-once: a stop-with-savepoint's
 * trigger reached only the idle partition, 3 ms after it opened; every window fired once at the end
 * of input, late records were put into windows). Once the timed split's barrier passed, the timed
 * channel's records come after it, so the idle channel is no longer held when they arrive.
 */
export class IdlePartitionOpenings {
  private readonly attempts = new Map<number, AttemptSources>();
  /** `onHeld`: called once per attempt whose timed split waits past its delay for its barrier. */
  constructor(private readonly onHeld: () => void = () => {}) {}

  private of(ctx: RuntimeContext): AttemptSources {
    let a = this.attempts.get(ctx.attempt);
    if (a === undefined) this.attempts.set(ctx.attempt, (a = { openedAtMs: null, idleBarrier: 0, timedBarrier: 0, held: false }));
    return a;
  }

  /** The idle partition's reports. */
  readonly idle: ReaderReports = {
    opened: (ctx) => {
      this.of(ctx).openedAtMs = ctx.clock.now();
    },
    snapshotted: (ctx, checkpointId) => {
      const a = this.of(ctx);
      if (a.openedAtMs !== null && ctx.clock.now() < a.openedAtMs + WINDOW_START_DELAY_MS) a.idleBarrier = Math.max(a.idleBarrier, checkpointId);
    },
  };

  /** The timed split's reports. */
  readonly timed: ReaderReports = {
    snapshotted: (ctx, checkpointId) => {
      const a = this.of(ctx);
      a.timedBarrier = Math.max(a.timedBarrier, checkpointId);
    },
  };

  /** When the timed split of this attempt may start, or null while that is not known (asked again). */
  timedStartAt(ctx: RuntimeContext): number | null {
    const a = this.of(ctx);
    if (a.openedAtMs === null) return null;
    const at = a.openedAtMs + WINDOW_START_DELAY_MS;
    if (a.timedBarrier >= a.idleBarrier || ctx.clock.now() < at) return at;
    if (!a.held) {
      a.held = true;
      this.onHeld();
    }
    return null;
  }
}

/** The timed source: one split, parallelism 1, a watermark after every record; with `openings`, it starts after the idle partition. */
export function windowSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number, openings?: IdlePartitionOpenings): DataStream<WindowRecord> {
  const strategy = WatermarkStrategy.forGenerator<WindowRecord>(() => ({
    onEvent: (r, _ts, out) => out.emitWatermark(windowWatermark(r.i)),
    onPeriodicEmit: () => {},
  })).withTimestampAssigner((r) => r.ts);
  const generated = new IndexedSource(
    'generate',
    { count: spec.count, ratePerSec },
    (i): WindowRecord => ({ ...seqRecord(spec, i), i, ts: windowEventTime(i) }),
  );
  const source = openings ? new DelayedStartSource(new ReportingSource(generated, openings.timed), (ctx) => openings.timedStartAt(ctx)) : generated;
  return oneSplit(env, source, spec, strategy);
}

/** The idle partition: one split sending a record `afterMs` after each (re)start (then another, up to its count), idle in between. */
export function idlePartitionSource(env: StreamEnvironment, spec: SeqSourceSpec, afterMs: number, openings: IdlePartitionOpenings): DataStream<WindowRecord> {
  // A watermark right behind each record (not at the next periodic tick): no moment with the record's channel active and its watermark still the minimum.
  const strategy = WatermarkStrategy.forGenerator<WindowRecord>(() => ({
    onEvent: (r, _ts, out) => out.emitWatermark(r.ts - 1),
    onPeriodicEmit: () => {},
  }))
    .withTimestampAssigner((r) => r.ts)
    .withIdleness(IDLE_PARTITION_TIMEOUT_MS);
  const generated = new IndexedSource(
    'generate',
    { count: spec.count, ratePerSec: 1000 / afterMs },
    (i): WindowRecord => ({
      ...seqRecord(spec, i),
      i,
      ts: IDLE_PARTITION_TS + i,
    }),
  );
  return oneSplit(env, new ReportingSource(generated, openings.idle), spec, strategy);
}

/** A source of one split (parallelism 1) and its timestamps, with the uids the scenarios' savepoints rely on. */
function oneSplit(
  env: StreamEnvironment,
  source: Source<WindowRecord>,
  spec: SeqSourceSpec,
  strategy: WatermarkStrategy<WindowRecord>,
): DataStream<WindowRecord> {
  return env
    .fromSource(source)
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
