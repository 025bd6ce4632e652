/**
 * A deterministic, replayable source over indices 0..count-1 (count may be Infinity): record i is
 * `produce(i)`. Indices are spread over splits (split s takes s, s+S, s+2S, ...); each split's next
 * index is operator list state, so the source rewinds exactly and can be rescaled.
 */
import type { Clock } from '../../core/time.ts';
import type { Collector, RuntimeContext } from '../../runtime/functions.ts';
import { POLL_END, POLL_MORE, type PollStatus } from '../../runtime/operator.ts';
import type { Source, SourceReader } from '../../runtime/source.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import type { ListState } from '../../state/state.ts';

export interface IndexedSourceOptions {
  readonly count: number;
  /** Records per second over all subtasks; omit for as fast as possible. */
  readonly ratePerSec?: number;
}

interface SplitPosition {
  readonly split: number;
  readonly splits: number;
  next: number;
}

const POSITIONS = new ListStateDescriptor<SplitPosition>('split-positions');

class IndexedReader<T> implements SourceReader<T> {
  private splits: SplitPosition[] = [];
  private state!: ListState<SplitPosition>;
  private cursor = 0;
  private emitted = 0;
  private startMs = 0;
  private ratePerSubtask = 0;
  private clock: Clock | null = null;

  constructor(
    private readonly options: IndexedSourceOptions,
    private readonly produce: (index: number) => T,
  ) {}

  open(ctx: RuntimeContext): void {
    this.state = ctx.getOperatorListState(POSITIONS);
    if (ctx.restored) {
      this.splits = this.state.get().map((s) => ({ ...s }));
    } else {
      this.splits = [{ split: ctx.subtaskIndex, splits: ctx.parallelism, next: ctx.subtaskIndex }];
    }
    if (this.options.ratePerSec !== undefined) {
      this.clock = ctx.clock;
      // The rate is shared by splits, so a subtask paces by the share of splits it owns (after a
      // rescale that share need not be 1/parallelism).
      const totalSplits = this.splits[0]?.splits ?? ctx.parallelism;
      this.ratePerSubtask = (this.options.ratePerSec * Math.max(1, this.splits.length)) / totalSplits;
      this.startMs = this.clock.now();
    }
  }

  poll(out: Collector<T>, maxRecords: number): PollStatus {
    let budget = maxRecords;
    if (this.clock) {
      const allowed = Math.floor(((this.clock.now() - this.startMs) / 1000) * this.ratePerSubtask) - this.emitted;
      if (allowed <= 0) return { status: 'wait', delayMs: Math.max(1, Math.ceil(1000 / this.ratePerSubtask)) };
      budget = Math.min(budget, allowed);
    }
    const count = this.options.count;
    const produce = this.produce;
    let idle = 0;
    while (budget > 0 && idle < this.splits.length) {
      const pos = this.splits[this.cursor++ % this.splits.length]!;
      if (pos.next >= count) {
        idle++;
        continue;
      }
      idle = 0;
      const n = Math.min(budget, Math.ceil((count - pos.next) / pos.splits));
      for (let k = 0; k < n; k++) {
        out.collect(produce(pos.next));
        pos.next += pos.splits;
      }
      budget -= n;
      this.emitted += n;
    }
    for (const pos of this.splits) if (pos.next < count) return POLL_MORE;
    return POLL_END;
  }

  snapshotState(): void {
    this.state.update(this.splits.map((s) => ({ ...s })));
  }

  close(): void {}
}

export class IndexedSource<T> implements Source<T> {
  readonly bounded: boolean;
  constructor(
    readonly name: string,
    private readonly options: IndexedSourceOptions,
    private readonly produce: (index: number) => T,
  ) {
    this.bounded = Number.isFinite(options.count);
  }
  createReader(): SourceReader<T> {
    return new IndexedReader(this.options, this.produce);
  }
}

/** A deterministic number in [0, 1) for (seed, index, salt): lets generators draw without state. */
export function uniformAt(seed: number, index: number, salt = 0): number {
  let h =
    Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index | 0, 0xc2b2ae35) ^ Math.imul((index / 4294967296) | 0, 0x27d4eb2f) ^ Math.imul(salt, 0x165667b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}
