/**
 * Sources that wait for the test or for checkpoints instead of racing the wall clock. A loaded
 * machine stretches a job's run and its checkpoints differently; a test that needs the job still
 * running when it acts, or N checkpoints taken before the input ends, holds the source instead.
 */
import { IndexedSource } from '../../src/connectors/generator/indexed-source.ts';
import type { DataStream, GeneratorOptions, StreamEnvironment } from '../../src/index.ts';
import type { Collector, RuntimeContext } from '../../src/runtime/functions.ts';
import type { PollStatus } from '../../src/runtime/operator.ts';
import type { Source, SourceReader } from '../../src/runtime/source.ts';

/** How often a held reader looks again whether it may go on. */
const HELD_POLL_MS = 2;

/**
 * A test-controlled limit on the records each source subtask emits (counted from the subtask's
 * open, so a restarted attempt counts again). Closed at `limitPerSubtask` until raised.
 */
export class SourceGate {
  private limit: number;
  private readonly emitted = new Map<number, number>();
  private readonly ended = new Set<number>();

  constructor(limitPerSubtask = 0) {
    this.limit = limitPerSubtask;
  }

  get limitPerSubtask(): number {
    return this.limit;
  }

  /** Lets every subtask emit up to `n` records in all. */
  allowUpTo(n: number): void {
    this.limit = Math.max(this.limit, n);
  }

  /** Lets every subtask run to its end. */
  open(): void {
    this.limit = Infinity;
  }

  /** Records emitted so far by all subtasks of the current attempt. */
  get emittedTotal(): number {
    let n = 0;
    for (const e of this.emitted.values()) n += e;
    return n;
  }

  /** Subtasks of the current attempt whose input ended. */
  get endedSubtasks(): number {
    return this.ended.size;
  }

  /** Resolves once each of `subtasks` subtasks emitted up to the limit or reached its end. */
  async reached(subtasks: number): Promise<void> {
    const done = (s: number) => this.ended.has(s) || (this.emitted.get(s) ?? 0) >= this.limit;
    while (![...Array(subtasks).keys()].every(done)) await new Promise((r) => setTimeout(r, HELD_POLL_MS));
  }

  /** @internal the reader's bookkeeping */
  opened(subtask: number): void {
    this.emitted.set(subtask, 0);
    this.ended.delete(subtask);
  }

  /** @internal */
  note(subtask: number, emitted: number, ended: boolean): void {
    this.emitted.set(subtask, emitted);
    if (ended) this.ended.add(subtask);
  }
}

export interface Hold {
  /** The subtasks wait at this gate. */
  readonly gate?: SourceGate;
  /**
   * Each subtask emits at most this many records between two of its snapshots, so a subtask with
   * R records cannot end before it took part in R / recordsPerCheckpoint - 1 checkpoints.
   * Needs periodic checkpoints (checkpointing.intervalMs), or it waits for ever.
   */
  readonly recordsPerCheckpoint?: number;
}

class HeldReader<T> implements SourceReader<T> {
  private subtask = 0;
  private emitted = 0;
  private atSnapshot = 0;

  constructor(
    private readonly inner: SourceReader<T>,
    private readonly hold: Hold,
  ) {}

  open(ctx: RuntimeContext): void {
    this.subtask = ctx.subtaskIndex;
    this.hold.gate?.opened(this.subtask);
    this.inner.open(ctx);
  }

  private allowance(): number {
    const byGate = (this.hold.gate?.limitPerSubtask ?? Infinity) - this.emitted;
    const byPace = (this.hold.recordsPerCheckpoint ?? Infinity) - (this.emitted - this.atSnapshot);
    return Math.min(byGate, byPace);
  }

  poll(out: Collector<T>, maxRecords: number): PollStatus {
    const allowed = Math.min(maxRecords, this.allowance());
    if (allowed <= 0) return { status: 'wait', delayMs: HELD_POLL_MS };
    const counting: Collector<T> = {
      collect: (record) => {
        this.emitted++;
        out.collect(record);
      },
    };
    const status = this.inner.poll(counting, allowed);
    this.hold.gate?.note(this.subtask, this.emitted, status.status === 'end');
    return status;
  }

  snapshotState(checkpointId: number): void {
    this.atSnapshot = this.emitted;
    this.inner.snapshotState(checkpointId);
  }

  close(): void {
    this.inner.close();
  }
}

/** `source`, held by `hold`; it keeps the name, boundedness and state of the source it wraps. */
export class HeldSource<T> implements Source<T> {
  readonly name: string;
  readonly bounded: boolean;

  constructor(
    private readonly inner: Source<T>,
    private readonly hold: Hold,
  ) {
    this.name = inner.name;
    this.bounded = inner.bounded;
  }

  createReader(): SourceReader<T> {
    return new HeldReader(this.inner.createReader(), this.hold);
  }
}

/** `env.generate(options, produce)`, held by `hold`. */
export function heldGenerate<T>(env: StreamEnvironment, options: GeneratorOptions, produce: (index: number, seed: number) => T, hold: Hold): DataStream<T> {
  const seed = options.seed ?? 0;
  const source = new IndexedSource('generate', { count: options.count, ratePerSec: options.ratePerSec }, (i) => produce(i, seed));
  return env.fromSource(new HeldSource(source, hold));
}
