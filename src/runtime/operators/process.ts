/**
 * Operators that run user process functions: one input or two, keyed or not. On keyed inputs the
 * record's key group arrives with the buffer; the operator only evaluates the key selector.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { Key } from '../../state/key-groups.ts';
import { keyGroup as asKeyGroup } from '../../core/ids.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import type { KeyGroup } from '../../core/ids.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';
import { ConfigError } from '../../core/errors.ts';
import type { Collector, OnTimerContext, ProcessContext, RichFunction, TimerService } from '../functions.ts';
import { AbstractStreamOperator } from '../operator.ts';
import type { OutputTag } from '../output-tag.ts';
import type { InternalTimerService, Triggerable } from '../time/timer-service.ts';
import { createRuntimeContext } from './runtime-context.ts';

/** The timer service name of user timers (`ctx.timerService()`); its state is `_timers/user`. */
const USER_TIMERS = 'user';

/** The shape shared by ProcessFunction, KeyedProcessFunction and the two-input variants. */
interface AnyProcessFunction extends RichFunction {
  processElement?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  processElement1?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  processElement2?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  endInput?(out: Collector<unknown>): void;
  onTimer?(timestampMs: number, ctx: OnTimerContext<any>, out: Collector<unknown>): void;
}

export class ProcessOperator extends AbstractStreamOperator implements OnTimerContext<any>, Triggerable, TimerService {
  private backend: KeyedStateBackend | null = null;
  currentKey: any = undefined;
  subtaskIndex = 0;
  timeDomain: 'event-time' | 'processing-time' = 'event-time';
  private endedInputs = 0;
  private timers: InternalTimerService | null = null;

  /**
   * @param keySelectors per input, the key selector when that input is keyed (null otherwise)
   */
  constructor(
    private readonly fn: AnyProcessFunction,
    private readonly keySelectors: ReadonlyArray<((record: any) => Key) | null>,
  ) {
    super();
  }

  override open(): void {
    this.backend = this.ctx.keyedBackend;
    this.subtaskIndex = this.ctx.subtaskIndex;
    // A function with onTimer gets its timer service now, so restored timers are pending before the first record.
    if (this.backend && this.fn.onTimer) this.timers = this.ctx.getInternalTimerService(USER_TIMERS, this);
    this.fn.open?.(createRuntimeContext(this.ctx));
  }

  get timestamp(): number | undefined {
    const t = this.ctx.timestamps.current;
    return t === NO_TIMESTAMP ? undefined : t;
  }

  timerService(): TimerService {
    if (this.timers === null) {
      if (!this.backend) throw new ConfigError(`timerService() of uid '${this.ctx.uid}'`, 'timers are only available on a keyed stream (after keyBy)');
      this.timers = this.ctx.getInternalTimerService(USER_TIMERS, this);
    }
    return this;
  }

  registerEventTimeTimer(timestampMs: number): void {
    this.timers!.registerEventTimeTimer('', timestampMs);
  }
  deleteEventTimeTimer(timestampMs: number): void {
    this.timers!.deleteEventTimeTimer('', timestampMs);
  }
  registerProcessingTimeTimer(timestampMs: number): void {
    this.timers!.registerProcessingTimeTimer('', timestampMs);
  }
  deleteProcessingTimeTimer(timestampMs: number): void {
    this.timers!.deleteProcessingTimeTimer('', timestampMs);
  }
  currentWatermark(): number {
    return this.timers!.currentWatermark();
  }
  currentProcessingTime(): number {
    return this.ctx.processingTime.now();
  }

  onEventTime(key: any, _keyGroup: KeyGroup, _namespace: string, timeMs: number): void {
    this.currentKey = key;
    this.timeDomain = 'event-time';
    this.fn.onTimer?.(timeMs, this, this.ctx.output);
  }

  onProcessingTime(key: any, _keyGroup: KeyGroup, _namespace: string, timeMs: number): void {
    this.currentKey = key;
    this.timeDomain = 'processing-time';
    this.fn.onTimer?.(timeMs, this, this.ctx.output);
  }

  processElement(record: unknown, keyGroup: number, input: number): void {
    const selector = this.keySelectors[input];
    if (selector) {
      const key = selector(record);
      this.currentKey = key;
      this.backend!.setCurrentKey(key, asKeyGroup(keyGroup));
    }
    const out = this.ctx.output;
    if (input === 0) {
      if (this.fn.processElement) this.fn.processElement(record, this, out);
      else this.fn.processElement1!(record, this, out);
    } else {
      this.fn.processElement2!(record, this, out);
    }
  }

  output<X>(tag: OutputTag<X>, value: X): void {
    this.ctx.output.sideOutput(tag.id, value);
  }

  override endInput(): void {
    if (++this.endedInputs === this.keySelectors.length) this.fn.endInput?.(this.ctx.output);
  }

  override snapshotState(checkpointId: CheckpointId): void {
    this.fn.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.fn.notifyCheckpointComplete?.(checkpointId);
  }

  override close(): void {
    this.fn.close?.();
  }
}
