/**
 * Sources the window scenarios add around their sequence sources: one that keeps a job open until
 * its output is all committed (processing-time windows fire only while the job runs), and wrappers
 * that start a source only from a given time and that report when a source opens and snapshots (so
 * a timed split starts once an idle partition beside it declared itself idle).
 */
import type { Collector, RuntimeContext } from '../../runtime/functions.ts';
import { POLL_END, type PollStatus } from '../../runtime/operator.ts';
import type { Source, SourceReader } from '../../runtime/source.ts';

/** Virtual ms between two looks at the condition. */
const HOLD_POLL_MS = 3;

/** Emits nothing and ends once `done()` holds (asked every few virtual ms): keeps the job's inputs open until then. */
export class HoldOpenSource<T> implements Source<T> {
  readonly bounded = true;
  constructor(
    readonly name: string,
    private readonly done: () => boolean,
  ) {}

  createReader(): SourceReader<T> {
    const done = this.done;
    return {
      open() {},
      poll: (): PollStatus => (done() ? POLL_END : { status: 'wait', delayMs: HOLD_POLL_MS }),
      snapshotState() {},
      close() {},
    };
  }
}

/**
 * `inner`, emitting nothing until the job's clock reaches `startAt(ctx)` for the reader's context
 * (asked again while it returns null: not known yet).
 */
export class DelayedStartSource<T> implements Source<T> {
  readonly bounded: boolean;
  readonly name: string;
  constructor(
    private readonly inner: Source<T>,
    private readonly startAt: (ctx: RuntimeContext) => number | null,
  ) {
    this.bounded = inner.bounded;
    this.name = inner.name;
  }

  createReader(): SourceReader<T> {
    const reader = this.inner.createReader();
    const startAt = this.startAt;
    let ctx: RuntimeContext | null = null;
    return {
      open(c: RuntimeContext) {
        ctx = c;
        return reader.open(c);
      },
      poll(out: Collector<T>, maxRecords: number): PollStatus {
        const at = startAt(ctx!);
        const left = at === null ? HOLD_POLL_MS : at - ctx!.clock.now();
        if (left > 0) return { status: 'wait', delayMs: Math.max(1, Math.ceil(left)) };
        return reader.poll(out, maxRecords);
      },
      snapshotState: (id) => reader.snapshotState(id),
      notifyCheckpointComplete: (id) => reader.notifyCheckpointComplete?.(id),
      notifyCheckpointAborted: (id) => reader.notifyCheckpointAborted?.(id),
      close: () => reader.close(),
    };
  }
}

/** What a `ReportingSource` reports, with the reader's context: its open, and each snapshot (a barrier it emitted). */
export interface ReaderReports {
  opened?(ctx: RuntimeContext): void;
  snapshotted?(ctx: RuntimeContext, checkpointId: number): void;
}

/** `inner`, reporting each reader's open and snapshots to `reports`. */
export class ReportingSource<T> implements Source<T> {
  readonly bounded: boolean;
  readonly name: string;
  constructor(
    private readonly inner: Source<T>,
    private readonly reports: ReaderReports,
  ) {
    this.bounded = inner.bounded;
    this.name = inner.name;
  }

  createReader(): SourceReader<T> {
    const reader = this.inner.createReader();
    const reports = this.reports;
    let ctx: RuntimeContext | null = null;
    return {
      open(c: RuntimeContext) {
        ctx = c;
        reports.opened?.(c);
        return reader.open(c);
      },
      poll: (out, maxRecords) => reader.poll(out, maxRecords),
      snapshotState: (id) => {
        reports.snapshotted?.(ctx!, id);
        reader.snapshotState(id);
      },
      notifyCheckpointComplete: (id) => reader.notifyCheckpointComplete?.(id),
      notifyCheckpointAborted: (id) => reader.notifyCheckpointAborted?.(id),
      close: () => reader.close(),
    };
  }
}
