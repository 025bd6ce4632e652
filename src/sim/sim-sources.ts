/**
 * Two sources the window scenarios add around their sequence sources: one that keeps a job open
 * until its output is all committed (processing-time windows fire only while the job runs), and
 * one that starts emitting a while after each (re)start (so an idle partition beside it has
 * declared itself idle first).
 */
import type { Clock } from '../core/time.ts';
import type { Collector, RuntimeContext } from '../runtime/functions.ts';
import { POLL_END, type PollStatus } from '../runtime/operator.ts';
import type { Source, SourceReader } from '../runtime/source.ts';

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

/** `inner`, emitting nothing for `delayMs` of the job's clock after each reader opens. */
export class DelayedStartSource<T> implements Source<T> {
  readonly bounded: boolean;
  readonly name: string;
  constructor(
    private readonly inner: Source<T>,
    private readonly delayMs: number,
  ) {
    this.bounded = inner.bounded;
    this.name = inner.name;
  }

  createReader(): SourceReader<T> {
    const reader = this.inner.createReader();
    const delayMs = this.delayMs;
    let clock: Clock | null = null;
    let startMs = 0;
    return {
      open(ctx: RuntimeContext) {
        clock = ctx.clock;
        startMs = clock.now() + delayMs;
        return reader.open(ctx);
      },
      poll(out: Collector<T>, maxRecords: number): PollStatus {
        const left = startMs - clock!.now();
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
