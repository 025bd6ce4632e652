/**
 * Runs a `SplitSource` as a `SourceReader`: assigns splits at open, runs the split reader's async
 * fetch loop into a bounded queue, drains the queue in `poll` without awaiting (each split's
 * records through that split's output, so each split has its own watermarks), snapshots the
 * position of every owned split in the sync phase and hands the positions of a completed
 * checkpoint to the split reader.
 */
import { yieldToEventLoop } from '../core/adapters.ts';
import { ListStateDescriptor } from '../state/descriptors.ts';
import type { ListState } from '../state/state.ts';
import type { Collector, RuntimeContext } from './functions.ts';
import { POLL_END, POLL_MORE, type PollStatus } from './operator.ts';
import { isReaderOutput, type ReaderOutput, type SourceReader } from './source.ts';
import { assignSplits, type SplitStateEntryV1 } from './split-assignment.ts';
import type { SourceSplit, SplitBatch, SplitReader, SplitSource } from './split-source.ts';

/** Union list state: every subtask restores all splits and keeps the ones it owns. */
const SPLITS = new ListStateDescriptor<SplitStateEntryV1<SourceSplit, unknown>>('split-source-splits');
const QUEUE_RECORDS_MAX = 8192;
const IDLE_POLL_MS = 2;
/** Snapshots awaiting their checkpoint's completion; older ones are dropped (a newer completion subsumes them). */
const PENDING_CHECKPOINTS_MAX = 64;

interface OwnedSplit<T, Split extends SourceSplit, Position> {
  readonly split: Split;
  position: Position;
  ended: boolean;
  /** Where its records go: its split output (bound at the first poll); null once ended. */
  output: Collector<T> | null;
}

/** The `SourceReader` of a split source: one per subtask and attempt (see split-source.ts). */
export class SplitSourceReader<T, Split extends SourceSplit, Position> implements SourceReader<T> {
  private state!: ListState<SplitStateEntryV1<Split, Position>>;
  private readonly owned = new Map<string, OwnedSplit<T, Split, Position>>();
  /** The collector the split outputs were taken from (a job passes the same one to every poll). */
  private boundTo: Collector<T> | null = null;
  private endedSplits = 0;
  private reader: SplitReader<T, Split, Position> | null = null;
  private readonly queue: SplitBatch<T, Position>[] = [];
  /** Records of `queue[0]` already emitted. */
  private offset = 0;
  /** Records queued and not yet emitted. */
  private queued = 0;
  private fetchEnded = false;
  private failure: { readonly error: unknown } | null = null;
  private closed = false;
  private space: (() => void) | null = null;
  private readonly pending = new Map<number, ReadonlyMap<string, Position>>();
  private readonly queueRecordsMax: number;
  private readonly idle: PollStatus;

  /**
   * A reader for one subtask of `source`.
   * @throws RangeError when `queueRecordsMax` or `idlePollMs` is not a positive number.
   */
  constructor(private readonly source: SplitSource<T, Split, Position>) {
    this.queueRecordsMax = source.queueRecordsMax ?? QUEUE_RECORDS_MAX;
    const idlePollMs = source.idlePollMs ?? IDLE_POLL_MS;
    if (!(this.queueRecordsMax >= 1)) throw new RangeError(`${source.name}: queueRecordsMax must be >= 1, got ${this.queueRecordsMax}`);
    if (!(idlePollMs > 0)) throw new RangeError(`${source.name}: idlePollMs must be > 0, got ${idlePollMs}`);
    this.idle = { status: 'wait', delayMs: idlePollMs };
  }

  /** Assigns this subtask's splits (restored positions first), opens the split reader and starts fetching. */
  async open(ctx: RuntimeContext): Promise<void> {
    this.state = ctx.getUnionListState(SPLITS as unknown as ListStateDescriptor<SplitStateEntryV1<Split, Position>>);
    const restored = ctx.restored ? this.state.get() : [];
    const enumerated = await this.source.enumerateSplits(ctx);
    const entries = assignSplits(restored, enumerated, ctx.subtaskIndex, ctx.parallelism, ctx.maxParallelism, (s) => this.source.initialPosition(s));
    for (const e of entries) {
      this.owned.set(e.split.id, { split: e.split, position: e.position, ended: e.ended, output: null });
      if (e.ended) this.endedSplits++;
    }
    const active = entries.filter((e) => !e.ended).map((e) => ({ split: e.split, position: e.position }));
    if (active.length === 0 || this.closed) return;
    const reader = this.source.createSplitReader(ctx);
    this.reader = reader;
    const pinned = await reader.open(active);
    if (pinned)
      for (const [id, position] of pinned) {
        const split = this.owned.get(id);
        if (split === undefined)
          throw new RangeError(`${this.source.name}: the split reader pinned a position of split '${id}', which this subtask does not own`);
        split.position = position;
      }
    void this.fetchLoop(reader);
  }

  private async fetchLoop(reader: SplitReader<T, Split, Position>): Promise<void> {
    try {
      while (!this.closed) {
        if (this.queued >= this.queueRecordsMax) {
          await new Promise<void>((resolve) => {
            this.space = resolve;
          });
          continue;
        }
        const batch = await reader.fetch();
        if (this.closed) return;
        if (batch === null) {
          this.fetchEnded = true;
          return;
        }
        this.check(batch);
        if (batch.records.length === 0 && batch.endPosition === undefined && !batch.splitEnded) {
          // nothing fetched: let timers and I/O run before asking again
          await yieldToEventLoop();
          continue;
        }
        this.queue.push(batch);
        this.queued += batch.records.length;
      }
    } catch (error) {
      if (!this.closed) this.failure = { error };
    }
  }

  private check(batch: SplitBatch<T, Position>): void {
    if (!this.owned.has(batch.splitId))
      throw new RangeError(`${this.source.name}: fetched a batch of split '${batch.splitId}', which this subtask does not own`);
    if (batch.records.length !== batch.positions.length)
      throw new RangeError(
        `${this.source.name}: a batch of split '${batch.splitId}' has ${batch.records.length} records but ${batch.positions.length} positions`,
      );
  }

  /** Emits queued records; never awaits. Rethrows a failure of the fetch loop. */
  poll(out: Collector<T>, maxRecords: number): PollStatus {
    if (this.failure !== null) throw this.failure.error;
    if (out !== this.boundTo) this.bindOutputs(out);
    let budget = maxRecords;
    while (budget > 0 && this.queue.length > 0) {
      const batch = this.queue[0]!;
      const split = this.owned.get(batch.splitId)!;
      const records = batch.records;
      const start = this.offset;
      const end = Math.min(records.length, start + budget);
      const target = split.output;
      if (target === null && end > start) throw new RangeError(`${this.source.name}: fetched records of split '${batch.splitId}' after it ended`);
      for (let i = start; i < end; i++) target!.collect(records[i]!);
      const n = end - start;
      budget -= n;
      this.queued -= n;
      this.offset = end;
      if (n > 0) split.position = batch.positions[end - 1]!;
      if (end === records.length) {
        if (batch.endPosition !== undefined) split.position = batch.endPosition;
        if (batch.splitEnded && !split.ended) {
          split.ended = true;
          this.endedSplits++;
          split.output = null;
          if (isReaderOutput(out)) out.releaseOutputForSplit(batch.splitId);
        }
        this.queue.shift();
        this.offset = 0;
      }
    }
    if (this.space !== null && this.queued < this.queueRecordsMax) {
      const resume = this.space;
      this.space = null;
      resume();
    }
    if (this.queue.length > 0) return POLL_MORE;
    if (this.source.bounded && (this.fetchEnded || this.endedSplits === this.owned.size)) return POLL_END;
    return this.idle;
  }

  /**
   * Takes an output per split that is not ended from `out` (before any record, so a split that
   * sends nothing yet holds the watermark back from the start); a plain collector serves them all.
   */
  private bindOutputs(out: Collector<T>): void {
    this.boundTo = out;
    const outputs: ReaderOutput<T> | null = isReaderOutput(out) ? out : null;
    for (const [id, s] of this.owned) if (!s.ended) s.output = outputs === null ? out : outputs.createOutputForSplit(id);
  }

  /** Writes every owned split with its position (the sync phase) and keeps the positions for the completion. */
  snapshotState(checkpointId: number): void {
    const entries: SplitStateEntryV1<Split, Position>[] = [];
    const positions = new Map<string, Position>();
    for (const s of this.owned.values()) {
      entries.push({ v: 1, split: s.split, position: s.position, ended: s.ended });
      positions.set(s.split.id, s.position);
    }
    this.state.update(entries);
    this.pending.set(checkpointId, positions);
    if (this.pending.size > PENDING_CHECKPOINTS_MAX) this.pending.delete(this.pending.keys().next().value!);
  }

  /** Hands the positions checkpoint `checkpointId` holds to the split reader (to acknowledge them). */
  notifyCheckpointComplete(checkpointId: number): Promise<void> | void {
    const positions = this.pending.get(checkpointId);
    for (const id of this.pending.keys()) if (id <= checkpointId) this.pending.delete(id);
    if (positions === undefined || this.closed || this.reader?.notifyCheckpointComplete === undefined) return;
    return this.reader.notifyCheckpointComplete(checkpointId, positions);
  }

  /** Forgets the positions of an aborted checkpoint. */
  notifyCheckpointAborted(checkpointId: number): void {
    this.pending.delete(checkpointId);
  }

  /** Stops the fetch loop and closes the split reader; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const resume = this.space;
    this.space = null;
    resume?.();
    const reader = this.reader;
    this.reader = null;
    if (reader === null) return;
    try {
      void Promise.resolve(reader.close()).catch(() => {});
    } catch {
      // closing must not throw
    }
  }
}
