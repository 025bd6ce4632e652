/**
 * A split source over in-memory partitions, written with the public split-source API as a user
 * would: each partition is a split (no ordinal: placed by hash, as discovered splits are), the
 * position is the index of the next record, and every completed checkpoint's positions are
 * recorded as "acknowledged" so tests can check that acknowledgements follow completions.
 */
import type { RuntimeContext, SourceReader, SourceSplit, SplitBatch, SplitReader, SplitSource } from '../../src/index.ts';
import { SplitSourceReader } from '../../src/index.ts';

export interface PartitionSplit extends SourceSplit {
  readonly partition: string;
}

/** What every reader of a MemorySplitSource did, across subtasks and attempts. */
export class MemoryLog {
  readonly acked = new Map<string, number>();
  readonly ackEvents: Array<{ checkpointId: number; subtask: number; positions: Map<string, number> }> = [];
  fetches = 0;
  /** Records at or after this index of a partition are not readable yet (a held source). */
  limit = Number.POSITIVE_INFINITY;
  openedWith: Array<{ subtask: number; attempt: number; splits: Array<[string, number]> }> = [];

  constructor(readonly partitions: Map<string, readonly string[]>) {}
}

class MemorySplitReader implements SplitReader<string, PartitionSplit, number> {
  private splits: Array<{ id: string; records: readonly string[]; next: number }> = [];
  private cursor = 0;
  private closed = false;

  constructor(
    private readonly log: MemoryLog,
    private readonly ctx: RuntimeContext,
    private readonly batchRecords: number,
  ) {}

  async open(splits: readonly { split: PartitionSplit; position: number }[]): Promise<void> {
    this.log.openedWith.push({ subtask: this.ctx.subtaskIndex, attempt: this.ctx.attempt, splits: splits.map((s) => [s.split.id, s.position]) });
    this.splits = splits.map((s) => ({ id: s.split.id, records: this.log.partitions.get(s.split.partition) ?? [], next: s.position }));
  }

  async fetch(): Promise<SplitBatch<string, number> | null> {
    this.log.fetches++;
    await new Promise((r) => setImmediate(r));
    if (this.closed) return null;
    const live = this.splits.filter((s) => s.next <= s.records.length);
    if (live.length === 0) return null;
    const s = live[this.cursor++ % live.length]!;
    const readable = Math.min(s.records.length, this.log.limit);
    if (s.next >= readable && s.next < s.records.length) {
      await new Promise((r) => setTimeout(r, 1));
      return { splitId: s.id, records: [], positions: [] };
    }
    const records = s.records.slice(s.next, Math.min(readable, s.next + this.batchRecords));
    const positions = records.map((_, i) => s.next + i + 1);
    s.next += records.length;
    const ended = s.next >= s.records.length;
    if (ended) s.next = s.records.length + 1; // reported once
    return { splitId: s.id, records, positions, splitEnded: ended };
  }

  notifyCheckpointComplete(checkpointId: number, positions: ReadonlyMap<string, number>): void {
    this.log.ackEvents.push({ checkpointId, subtask: this.ctx.subtaskIndex, positions: new Map(positions) });
    for (const [id, p] of positions) this.log.acked.set(id, p);
  }

  close(): void {
    this.closed = true;
  }
}

/** A bounded split source over `log.partitions`, each partition one split. */
export class MemorySplitSource implements SplitSource<string, PartitionSplit, number> {
  readonly name = 'memory-splits';
  readonly bounded = true;
  constructor(
    private readonly log: MemoryLog,
    private readonly batchRecords = 50,
    readonly queueRecordsMax?: number,
  ) {}
  enumerateSplits(): PartitionSplit[] {
    return [...this.log.partitions.keys()].map((partition) => ({ id: `p:${partition}`, partition }));
  }
  initialPosition(): number {
    return 0;
  }
  createSplitReader(ctx: RuntimeContext): SplitReader<string, PartitionSplit, number> {
    return new MemorySplitReader(this.log, ctx, this.batchRecords);
  }
  createReader(): SourceReader<string> {
    return new SplitSourceReader(this);
  }
}
