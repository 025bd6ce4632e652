/**
 * Stream operators: what a subtask's chain is made of. The head receives records from the input
 * gate (with key groups on keyed edges); each operator hands output to the next through `Output`.
 */
import type { CheckpointId } from '../core/ids.ts';
import type { Clock } from '../core/time.ts';
import type { KeyedStateBackend, OperatorStateBackend } from '../state/backend.ts';
import type { ElementTimestamp } from './time/element-timestamp.ts';
import type { ProcessingTimeService } from './time/processing-time.ts';
import type { InternalTimeServiceManager, InternalTimerService, Triggerable } from './time/timer-service.ts';

/**
 * Where an operator emits. `collect` sends the record with the subtask's `timestamps.current` as its
 * event time; an operator emitting with a time of its own calls `ctx.timestamps.markTimed()` once
 * (when it opens, or before its first such record) and sets `ctx.timestamps.current` first: an
 * untimed register is not read per record (element-timestamp.ts).
 */
export interface Output {
  collect(record: unknown): void;
  /** Emits a record to the side output `tagId` (an OutputTag's id); dropped when nothing reads it. */
  sideOutput(tagId: string, record: unknown): void;
  /** Chained: the next operator's `processWatermark`; at the chain's end: broadcast on every channel. */
  emitWatermark(watermarkMs: number): void;
  /** Tells the channels downstream that this subtask went idle (or active again); skips chained operators. */
  emitWatermarkStatus(idle: boolean): void;
}

export interface OperatorContext {
  readonly uid: string;
  readonly name: string;
  readonly subtaskIndex: number;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly attempt: number;
  /** Unique per process and attempt (see RuntimeContext.runId). */
  readonly runId: string;
  readonly output: Output;
  readonly keyedBackend: KeyedStateBackend | null;
  readonly operatorState: OperatorStateBackend;
  readonly clock: Clock;
  /** Whether this subtask was restored from a snapshot. */
  readonly restored: boolean;
  /**
   * The event time of the element being processed (one register per subtask). Call its
   * `markTimed()` before writing a timestamp into it: until then the subtask skips it per record.
   */
  readonly timestamps: ElementTimestamp;
  /** Processing time and mailbox callbacks (periodic watermarks, processing-time timers). */
  readonly processingTime: ProcessingTimeService;
  /** Event time of the job's graph: `autoWatermarkIntervalMs` of the environment. */
  readonly autoWatermarkIntervalMs: number;
  /** This operator's timer services (keyed operators only; null otherwise). */
  readonly timeServices: InternalTimeServiceManager | null;
  /**
   * A named timer service of this keyed operator, its pending timers restored.
   * @throws assertion error on a non-keyed operator.
   */
  getInternalTimerService(name: string, triggerable: Triggerable): InternalTimerService;
}

export interface StreamOperator {
  setup(ctx: OperatorContext): void;
  /** After state is restored, before the first record; a returned promise (recovery commits) is awaited. */
  open(): Promise<void> | void;
  processElement(record: unknown, keyGroup: number, input: number): void;
  /** The combined input watermark advanced to `watermarkMs` (only ever increases). */
  processWatermark(watermarkMs: number): void;
  /** Input `input` ended (bounded streams). */
  endInput(input: number): void;
  /**
   * Before the barrier is forwarded: sinks pre-commit here. A returned promise (a pre-commit that
   * needs I/O to become durable) is awaited before the checkpoint is acknowledged; its rejection
   * fails the subtask.
   */
  prepareSnapshotPreBarrier(checkpointId: CheckpointId): Promise<void> | void;
  /** Sync phase: write fields into operator state. */
  snapshotState(checkpointId: CheckpointId): void;
  /** After the checkpoint is complete; a returned promise (a commit) is awaited before the task finishes. */
  notifyCheckpointComplete(checkpointId: CheckpointId): Promise<void> | void;
  notifyCheckpointAborted(checkpointId: CheckpointId): void;
  /** Normal end of the operator. */
  close(): void;
  /** Teardown on failure or cancel; must not throw. */
  dispose(): void;
}

/** Defaults for operators: every hook does nothing. */
export abstract class AbstractStreamOperator implements StreamOperator {
  protected ctx!: OperatorContext;
  setup(ctx: OperatorContext): void {
    this.ctx = ctx;
  }
  open(): Promise<void> | void {}
  abstract processElement(record: unknown, keyGroup: number, input: number): void;
  /** Fires this operator's event-time timers at or below the watermark, then passes it on. */
  processWatermark(watermarkMs: number): void {
    this.ctx.timeServices?.advanceWatermark(watermarkMs);
    this.ctx.output.emitWatermark(watermarkMs);
  }
  endInput(_input: number): void {}
  prepareSnapshotPreBarrier(_checkpointId: CheckpointId): Promise<void> | void {}
  snapshotState(_checkpointId: CheckpointId): void {}
  notifyCheckpointComplete(_checkpointId: CheckpointId): Promise<void> | void {}
  notifyCheckpointAborted(_checkpointId: CheckpointId): void {}
  close(): void {}
  dispose(): void {}
}

/** What a source subtask's reader returns from one poll. */
export type PollStatus =
  | {
      /** Poll again soon: there may be more records. */
      readonly status: 'more';
    }
  | {
      /** Nothing now: poll again after `delayMs`. */
      readonly status: 'wait';
      /** Milliseconds to wait before the next poll. */
      readonly delayMs: number;
    }
  | {
      /** This subtask's input is exhausted. */
      readonly status: 'end';
    };

/** The poll result for "there may be more records: poll again". */
export const POLL_MORE: PollStatus = { status: 'more' };
/** The poll result for "this subtask's input is exhausted". */
export const POLL_END: PollStatus = { status: 'end' };

/** A source at the head of a source subtask's chain; the task polls it instead of an input gate. */
export interface SourceOperator extends StreamOperator {
  readonly isSource: true;
  /** Records emitted so far in this attempt. */
  readonly recordsOut: number;
  /** Emits at most `maxRecords` records into the output. */
  poll(maxRecords: number): PollStatus;
}

export function isSourceOperator(op: StreamOperator): op is SourceOperator {
  return (op as Partial<SourceOperator>).isSource === true;
}
