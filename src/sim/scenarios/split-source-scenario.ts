/**
 * The simulator's split-source scenario: a job reading a `SplitSource` (the connector API users
 * implement) into tumbling event-time windows, through every fault, mode, kill and rescale.
 *
 * The source's external system (`SplitLogs`) outlives the simulated processes, as a broker's log
 * does: seven append-only splits, more than any parallelism the simulator draws, dealt round-robin
 * by ordinal so subtasks own several and a rescale moves them with their offsets. A reader fetches
 * through the process's scheduler (a killed process's fetches never complete) and acknowledges the
 * offsets of a completed checkpoint; the logs check that no acknowledgement runs ahead of the
 * records it fetched or of the newest durable checkpoint.
 *
 * Event time, designed so that no record is ever late when watermarks are right, whatever the
 * interleaving, faults, restores and rescales (so each window fires once with the value of the
 * fault-free run, and the late side output stays empty):
 * - Six lanes: record j of lane s has event time `10 j - 60 s` ± 30 ms, within the 200 ms bound of
 *   its own split, but lanes on one subtask are 60-300 ms apart (120-300 at parallelism 2 to 4): with
 *   one watermark generator per subtask (instead of per split) the lane behind is late.
 * - The idle split sends a few records and falls silent; its log grows again once a lane window
 *   far ahead of its watermark was committed, which needs it to have gone idle (or, when the lanes
 *   fell silent in the same round, after a long silence: `rejoinedBy` says which; without idleness
 *   it is always the silence). It rejoins with records ahead of every lane. They are never late:
 *   no watermark passes them before they are read, because no lane ends before the idle split is
 *   acknowledged to its end in the same attempt (an ended lane could let the maximum through).
 * - The idle timeout is long (400 virtual ms) so that a lane stalled behind an aligned checkpoint
 *   or backpressure does not go idle: a lane behind by more than the bound that went idle and sent
 *   again would be late, correctly, but at a moment that depends on the interleaving.
 *
 * Window results carry the count of distinct records and the count of records added, so a record
 * counted twice is a difference from the fault-free run. At-least-once snapshots the window
 * operator with watermarks that came after a source's barrier (no alignment), so a record the
 * source replays may be late, correctly, and its window fire without it: there each firing emits
 * a line per distinct record and window, and a late record the same line, so the check is that
 * every record reached its window or the late output at least once.
 */
import type { DataStream } from '../../api/data-stream.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import type { Scheduler } from '../../core/time.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import { OutputTag } from '../../runtime/output-tag.ts';
import type { SourceReader } from '../../runtime/source.ts';
import type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from '../../runtime/split-source.ts';
import { SplitSourceReader } from '../../runtime/split-source-reader.ts';
import { WatermarkStrategy } from '../../runtime/time/watermark-strategy.ts';
import { TumblingEventTimeWindows } from '../../runtime/windows/assigners.ts';
import type { SequenceLog, SequenceMode } from './scenarios.ts';

export const LANES = 6;
export const IDLE_SPLIT = 'idle';
export const SPLIT_BOUND_MS = 200;
export const SPLIT_IDLE_TIMEOUT_MS = 400;
export const SPLIT_WINDOW_MS = 100;
export const SPLIT_LATENESS_MS = 50;
/** Records of the idle split before it falls silent, and after it rejoins. */
const IDLE_BEFORE = 8;
const IDLE_AFTER = 10;
/** The idle split rejoins after this long without a record of it, if no lane window let it before. */
const REJOIN_SILENCE_MS = 5 * SPLIT_IDLE_TIMEOUT_MS;

/** One record of a split: its split, its offset in it, its key and event time. */
export interface SplitRecord {
  readonly split: string;
  readonly offset: number;
  readonly key: string;
  readonly ts: number;
}

interface Log {
  readonly split: SourceSplit;
  readonly records: readonly SplitRecord[];
}

/** ±30 ms, from the offset alone. */
function jitter(offset: number, ordinal: number): number {
  return (((offset * 104_729 + ordinal * 7_919) % 7) - 3) * 10;
}

/**
 * The source's external system, kept across every process of a seed's run: the splits' logs, and
 * the acknowledgements readers gave, per attempt (`runId`), checked as they come.
 */
export class SplitLogs {
  readonly logs: ReadonlyMap<string, Log>;
  /** Per attempt: the highest offset acknowledged per split. */
  private readonly acked = new Map<string, Map<string, number>>();
  /** Per attempt: the splits its readers opened with, and those whose end they fetched. */
  private readonly assigned = new Map<string, Set<string>>();
  private readonly endFetched = new Map<string, Set<string>>();
  /** Attempts whose idle split waited, every lane's end fetched, for a lane end no completed checkpoint held yet. */
  private readonly idleEndHeldIn = new Set<string>();
  acks = 0;
  /** Window start (ms) of the first lane windows that fire only once the idle split is idle. */
  readonly rejoinAfterWindowMs: number;
  /** Why the idle split's second part was appended (for good: logs only grow); null: not yet. */
  rejoinedBy: 'idleness' | 'silence' | null = null;
  /** Every reader's opening: which subtask of which parallelism read which splits from where (tests look at rescales). */
  readonly openings: Array<{
    readonly runId: string;
    readonly subtask: number;
    readonly parallelism: number;
    readonly positions: ReadonlyArray<readonly [string, number]>;
  }> = [];

  constructor(
    count: number,
    keysPerSplit: number,
    private readonly log: SequenceLog,
    private readonly newestDurable: () => number,
    private readonly committed: () => ReadonlyArray<{ readonly record: string }>,
  ) {
    const perLane = Math.max(60, Math.ceil(count / (LANES + 1)));
    // Lane windows from here on fire only when the idle split is idle (its watermark is below -100 before it rejoins).
    this.rejoinAfterWindowMs = Math.floor((10 * perLane - 600) / SPLIT_WINDOW_MS) * SPLIT_WINDOW_MS;
    const logs = new Map<string, Log>();
    for (let s = 0; s < LANES; s++) {
      const id = `lane-${s}`;
      const records = Array.from({ length: perLane }, (_, j) => ({
        split: id,
        offset: j,
        key: `${s}.${j % keysPerSplit}`,
        ts: 10 * j - 60 * s + jitter(j, s),
      }));
      logs.set(id, { split: { id, ordinal: s }, records });
    }
    const idle = Array.from({ length: IDLE_BEFORE + IDLE_AFTER }, (_, j) => ({
      split: IDLE_SPLIT,
      offset: j,
      key: `i.${j % keysPerSplit}`,
      // Before: with the lanes' front; after: ahead of every lane's last record.
      ts: j < IDLE_BEFORE ? 10 * j + jitter(j, LANES) : 10 * perLane + 100 + 10 * (j - IDLE_BEFORE),
    }));
    logs.set(IDLE_SPLIT, { split: { id: IDLE_SPLIT, ordinal: LANES }, records: idle });
    this.logs = logs;
  }

  /**
   * Records of split `id` readable from `offset` now, `silentMs` after the reader last fetched a
   * record of the idle split. The idle split's second part is appended to its log once a lane
   * window starting at `rejoinAfterWindowMs` or later is committed (only the idle split going idle
   * lets such a window fire before then), or after a long silence: when all of a subtask's splits
   * fall silent in one periodic round, the subtask goes idle without emitting the lanes' watermark.
   */
  readableEnd(id: string, offset: number, silentMs: number): number {
    const n = this.logs.get(id)!.records.length;
    if (id !== IDLE_SPLIT || offset > IDLE_BEFORE || this.rejoinedBy !== null) return n;
    const fired = this.committed().some(({ record }) => {
      // A window line (`W|key|start|...`, at-least-once `R|key|start|offset`) of a lane.
      if (!(record.startsWith('W|') || record.startsWith('R|')) || record.startsWith('i.', 2)) return false;
      return Number(record.split('|')[2]) >= this.rejoinAfterWindowMs;
    });
    this.rejoinedBy = fired ? 'idleness' : silentMs > REJOIN_SILENCE_MS ? 'silence' : null;
    return this.rejoinedBy !== null ? n : IDLE_BEFORE;
  }

  /** A reader of subtask `ctx` opened with these splits at these positions. */
  opened(ctx: RuntimeContext, splits: ReadonlyArray<{ readonly id: string; readonly next: number }>): void {
    this.openings.push({ runId: ctx.runId, subtask: ctx.subtaskIndex, parallelism: ctx.parallelism, positions: splits.map((s) => [s.id, s.next] as const) });
    let run = this.assigned.get(ctx.runId);
    if (run === undefined) this.assigned.set(ctx.runId, (run = new Set()));
    for (const s of splits) run.add(s.id);
  }

  /**
   * Whether split `id`, read to its end, may end in attempt `runId`. A lane only once the idle
   * split was acknowledged to its end in that attempt. The idle split only once every lane read in
   * that attempt was acknowledged ended (a completed checkpoint holds its end position), so a
   * checkpoint that holds the idle split ended holds every lane ended, and no restore leaves a lane
   * waiting for an idle split no reader of the attempt holds. An end the reader fetched is not
   * enough: its subtask may snapshot before it emits the end, while the idle split's subtask
   * snapshots after (seeds 20134 unaligned and 20147 aligned-timeout waited for ever).
   */
  mayEnd(id: string, runId: string): boolean {
    const acked = this.acked.get(runId);
    if (id === IDLE_SPLIT) {
      // Acknowledged at all: a checkpoint of the attempt completed, so every reader of it opened.
      if (acked?.get(IDLE_SPLIT) === undefined) return false;
      const lanes = [...(this.assigned.get(runId) ?? [])].filter((s) => s !== IDLE_SPLIT);
      if (lanes.every((s) => (acked.get(s) ?? -1) >= this.endedPosition(s))) return true;
      const fetched = this.endFetched.get(runId);
      if (lanes.every((s) => fetched?.has(s))) this.idleEndHeldIn.add(runId);
      return false;
    }
    return (acked?.get(IDLE_SPLIT) ?? -1) >= this.logs.get(IDLE_SPLIT)!.records.length;
  }

  /** A reader of attempt `runId` fetched the end of split `id`. */
  endFetchedBy(runId: string, id: string): void {
    let run = this.endFetched.get(runId);
    if (run === undefined) this.endFetched.set(runId, (run = new Set()));
    run.add(id);
  }

  /** Attempts in which the idle split's end waited for a lane end its reader had fetched and no completed checkpoint held. */
  get idleEndsHeld(): number {
    return this.idleEndHeldIn.size;
  }

  /** The position of a split that ended: past the end marker that follows its last record. */
  endedPosition(id: string): number {
    return this.logs.get(id)!.records.length + 1;
  }

  /**
   * Attempts that restored a lane at its end, not ended, with the idle split read to its end: the
   * lane waits for the idle split's acknowledgement in that attempt (before the idle split waited
   * for acknowledged lane ends, such a checkpoint could hold it ended, with no reader to acknowledge it).
   */
  get restoresWithLaneAtEnd(): number {
    const runs = new Map<string, { lane: boolean; idle: boolean }>();
    for (const o of this.openings) {
      const run = runs.get(o.runId) ?? { lane: false, idle: false };
      for (const [id, at] of o.positions) {
        const n = this.logs.get(id)!.records.length;
        if (id === IDLE_SPLIT) run.idle ||= at === n;
        else run.lane ||= at === n;
      }
      runs.set(o.runId, run);
    }
    return [...runs.values()].filter((r) => r.lane && r.idle).length;
  }

  /**
   * A reader of attempt `runId` acknowledges checkpoint `checkpointId` at `positions`, having
   * fetched up to `fetched` and acknowledged up to `before` (both by split id).
   */
  acknowledge(
    runId: string,
    checkpointId: number,
    positions: ReadonlyMap<string, number>,
    fetched: ReadonlyMap<string, number>,
    before: Map<string, number>,
  ): void {
    this.acks++;
    const durable = this.newestDurable();
    if (checkpointId > durable) this.violate(`${runId} acknowledged checkpoint ${checkpointId}, but the newest durable one is ${durable}`);
    let run = this.acked.get(runId);
    if (run === undefined) this.acked.set(runId, (run = new Map()));
    for (const [id, offset] of positions) {
      run.set(id, Math.max(run.get(id) ?? 0, offset));
      // A split that ended before this attempt is in the positions but was never this reader's to read.
      const read = fetched.get(id);
      if (read === undefined) continue;
      if (offset > read) this.violate(`${runId} acknowledged split ${id} at ${offset} in checkpoint ${checkpointId}, past what it fetched (${read})`);
      if (offset < (before.get(id) ?? 0))
        this.violate(`${runId} acknowledged split ${id} at ${offset} in checkpoint ${checkpointId}, behind its earlier ${before.get(id)}`);
      before.set(id, offset);
    }
  }

  private violate(message: string): void {
    if (this.log.violations.length < 20) this.log.violations.push(`split source: ${message}`);
  }
}

interface ReadSplit {
  readonly id: string;
  next: number;
}

/** Reads the splits of one subtask and attempt; a fetch completes after a short delay of its process's scheduler. */
class SimSplitReader implements SplitReader<SplitRecord, SourceSplit, number> {
  private splits: ReadSplit[] = [];
  private turn = 0;
  private closed = false;
  private settle: ((b: SplitBatch<SplitRecord, number> | null) => void) | null = null;
  private readonly fetched = new Map<string, number>();
  private readonly acked = new Map<string, number>();
  /** When this reader last fetched a record of the idle split (or opened). */
  private idleSeenMs = 0;

  constructor(
    private readonly logs: SplitLogs,
    private readonly ctx: RuntimeContext,
    private readonly scheduler: Scheduler,
  ) {}

  async open(assigned: readonly SplitAssignment<SourceSplit, number>[]): Promise<void> {
    this.splits = assigned.map((a) => ({ id: a.split.id, next: a.position }));
    for (const s of this.splits) this.fetched.set(s.id, s.next);
    this.logs.opened(this.ctx, this.splits);
    this.idleSeenMs = this.ctx.clock.now();
  }

  fetch(): Promise<SplitBatch<SplitRecord, number> | null> {
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.settle = resolve;
      const delayMs = 0.1 + ((this.turn * 7 + this.splits.length) % 5) * 0.2;
      this.scheduler.schedule(delayMs, () => {
        if (this.settle !== resolve) return;
        this.settle = null;
        resolve(this.closed ? null : this.next());
      });
    });
  }

  private next(): SplitBatch<SplitRecord, number> | null {
    const live = this.splits.filter((s) => s.next >= 0);
    if (live.length === 0) return null;
    for (let k = 0; k < live.length; k++) {
      const s = live[(this.turn + k) % live.length]!;
      const records = this.logs.logs.get(s.id)!.records;
      if (s.next >= records.length) {
        if (!this.logs.mayEnd(s.id, this.ctx.runId)) continue;
        this.turn = (this.turn + k + 1) % live.length;
        s.next = -1;
        // The log's end marker: the position after it says, in acknowledgements, that a checkpoint holds the split ended.
        const endPosition = this.logs.endedPosition(s.id);
        this.fetched.set(s.id, endPosition);
        this.logs.endFetchedBy(this.ctx.runId, s.id);
        return { splitId: s.id, records: [], positions: [], endPosition, splitEnded: true };
      }
      const end = Math.min(this.logs.readableEnd(s.id, s.next, this.ctx.clock.now() - this.idleSeenMs), s.next + 1 + (s.next % 4));
      if (end <= s.next) continue;
      this.turn = (this.turn + k + 1) % live.length;
      if (s.id === IDLE_SPLIT) this.idleSeenMs = this.ctx.clock.now();
      const batch = records.slice(s.next, end);
      const positions = batch.map((r) => r.offset + 1);
      s.next = end;
      this.fetched.set(s.id, end);
      return { splitId: s.id, records: batch, positions };
    }
    return { splitId: live[0]!.id, records: [], positions: [] };
  }

  notifyCheckpointComplete(checkpointId: number, positions: ReadonlyMap<string, number>): void {
    this.logs.acknowledge(this.ctx.runId, checkpointId, positions, this.fetched, this.acked);
  }

  close(): void {
    this.closed = true;
    const settle = this.settle;
    this.settle = null;
    settle?.(null);
  }
}

/** The split source over the seed's logs; each process builds its own over its scheduler. */
class SimSplitSource implements SplitSource<SplitRecord, SourceSplit, number> {
  readonly name = 'split-source';
  readonly bounded = true;
  readonly queueRecordsMax = 16;

  constructor(
    private readonly logs: SplitLogs,
    private readonly scheduler: Scheduler,
  ) {}

  enumerateSplits(): SourceSplit[] {
    return [...this.logs.logs.values()].map((l) => l.split);
  }

  initialPosition(): number {
    return 0;
  }

  createSplitReader(ctx: RuntimeContext): SplitReader<SplitRecord, SourceSplit, number> {
    return new SimSplitReader(this.logs, ctx, this.scheduler);
  }

  createReader(): SourceReader<SplitRecord> {
    return new SplitSourceReader(this);
  }
}

interface WindowAcc {
  readonly offsets: readonly number[];
  readonly adds: number;
}

/**
 * The job: the split source with per-split watermarks (and, as the changed job, a stateless stage
 * added after it), tumbling windows per key with allowed lateness, and the late side output.
 */
export function splitSourceStage(
  env: StreamEnvironment,
  logs: SplitLogs,
  scheduler: Scheduler,
  log: SequenceLog,
  mode: SequenceMode,
  changed: boolean,
): { results: DataStream<string>; late: DataStream<string> } {
  const strategy = WatermarkStrategy.forBoundedOutOfOrderness<SplitRecord>(SPLIT_BOUND_MS)
    .withTimestampAssigner((r) => r.ts)
    .withIdleness(SPLIT_IDLE_TIMEOUT_MS);
  let input = env.fromSource(new SimSplitSource(logs, scheduler), 'split-source', { watermarks: strategy }).uid('source-split');
  if (changed) input = input.map((r) => r).uid('split-added');
  const lateTag = new OutputTag<SplitRecord>('late');
  const results = input
    .keyBy((r) => r.key)
    .window(TumblingEventTimeWindows.of(SPLIT_WINDOW_MS))
    .allowedLateness(SPLIT_LATENESS_MS)
    .sideOutputLateData(lateTag)
    .aggregate<WindowAcc, WindowAcc, string>(
      {
        createAccumulator: () => ({ offsets: [], adds: 0 }),
        add: (r, acc) => ({ offsets: acc.offsets.includes(r.offset) ? acc.offsets : [...acc.offsets, r.offset], adds: acc.adds + 1 }),
        getResult: (acc) => acc,
        merge: (a, b) => ({ offsets: [...new Set([...a.offsets, ...b.offsets])], adds: a.adds + b.adds }),
      },
      () => ({
        process: (key, ctx, accs, out) => {
          for (const acc of accs) {
            if (mode !== 'exact') {
              for (const offset of acc.offsets) out.collect(`R|${key}|${ctx.window.start}|${offset}`);
              continue;
            }
            const sum = acc.offsets.reduce((x, y) => x + y, 0);
            out.collect(`W|${key}|${ctx.window.start}|${acc.offsets.length}|${sum}|${acc.adds}`);
          }
        },
      }),
    )
    .uid('split-windows')
    .name('split-windows');
  const late = results.getSideOutput(lateTag).map((r) => {
    // At-least-once: a record replayed behind the restored watermark is late, its first copy may
    // not be in the restored window: it counts as the record in its window.
    if (mode !== 'exact') return `R|${r.key}|${Math.floor(r.ts / SPLIT_WINDOW_MS) * SPLIT_WINDOW_MS}|${r.offset}`;
    // Nothing is late when watermarks are right.
    if (log.violations.length < 20) log.violations.push(`split source: record ${r.split}@${r.offset} (event time ${r.ts}) was late`);
    return `L|${r.key}|${r.split}@${r.offset}`;
  });
  return { results, late };
}
