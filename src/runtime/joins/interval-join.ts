/**
 * The interval join of two keyed streams: a left record at time `t` joins every right record of the
 * same key whose time lies in `[t + lowerMs, t + upperMs]`. Each side's records wait in keyed state
 * (`left-buffer`, `right-buffer`: MapState by timestamp) until the watermark passes the last time a
 * record of the other side could still match them; an event-time timer per (key, timestamp) then
 * removes them, so the state holds only what can still join. A record behind the watermark is
 * dropped; the watermark survives restores (restored-watermark.ts), so which records those are does
 * not depend on failures.
 */
import { JobDefinitionError } from '../../core/errors.ts';
import { keyGroup as asKeyGroup, type KeyGroup } from '../../core/ids.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import { MapStateDescriptor } from '../../state/descriptors.ts';
import type { Key } from '../../state/key-groups.ts';
import type { MapState } from '../../state/state.ts';
import type { Collector, RichFunction } from '../functions.ts';
import { AbstractStreamOperator } from '../operator.ts';
import { createRuntimeContext } from '../operators/runtime-context.ts';
import type { OutputTag } from '../output-tag.ts';
import type { Triggerable } from '../time/timer-service.ts';
import { RestoredWatermarkTimers } from '../windows/restored-watermark.ts';

/** What a join function sees with each joined pair. */
export interface ProcessJoinContext {
  /** The left record's event time in milliseconds. */
  readonly leftTimestamp: number;
  /** The right record's event time in milliseconds. */
  readonly rightTimestamp: number;
  /** The pair's event time: the later of the two (what emitted records carry). */
  readonly timestamp: number;
  /** Emits `value` to the side output `tag`. */
  output<X>(tag: OutputTag<X>, value: X): void;
}

/** Called for every pair an interval join finds (`intervalJoin(...).between(...).process(...)`). */
export interface ProcessJoinFunction<L, R, OUT> extends RichFunction {
  /** One left record and one right record of the same key within the interval; emits through `out`. */
  processElement(left: L, right: R, ctx: ProcessJoinContext, out: Collector<OUT>): void;
}

export interface IntervalJoinSpec {
  readonly lowerMs: number;
  readonly upperMs: number;
  readonly keySelectors: readonly [(r: unknown) => Key, (r: unknown) => Key];
  readonly createFunction: () => ProcessJoinFunction<unknown, unknown, unknown>;
}

const LEFT = 'left';
const RIGHT = 'right';

export class IntervalJoinOperator extends AbstractStreamOperator implements Triggerable, ProcessJoinContext {
  private backend!: KeyedStateBackend;
  private timers!: RestoredWatermarkTimers;
  private left!: MapState<number, unknown[]>;
  private right!: MapState<number, unknown[]>;
  private fn!: ProcessJoinFunction<unknown, unknown, unknown>;
  leftTimestamp = 0;
  rightTimestamp = 0;
  timestamp = 0;
  /** Records dropped because they arrived behind the watermark. */
  lateRecordsDropped = 0;

  constructor(private readonly spec: IntervalJoinSpec) {
    super();
  }

  override open(): void {
    const backend = this.ctx.keyedBackend;
    if (!backend) throw new JobDefinitionError(`interval join '${this.ctx.name}' (uid ${this.ctx.uid}) needs two keyed inputs`);
    this.backend = backend;
    this.ctx.timestamps.markTimed(); // emits with the joined records' event time
    this.timers = new RestoredWatermarkTimers(
      this.ctx.getInternalTimerService('interval-join-cleanup', this),
      this.ctx.operatorState,
      this.ctx.keyedBackend?.keyGroupRange ?? null,
    );
    this.left = backend.getState(new MapStateDescriptor<number, unknown[]>('left-buffer'));
    this.right = backend.getState(new MapStateDescriptor<number, unknown[]>('right-buffer'));
    this.fn = this.spec.createFunction();
    this.fn.open?.(createRuntimeContext(this.ctx));
  }

  processElement(record: unknown, keyGroup: number, input: number): void {
    const key = this.spec.keySelectors[input === 0 ? 0 : 1](record);
    this.backend.setCurrentKey(key, asKeyGroup(keyGroup));
    const ts = this.ctx.timestamps.current;
    if (ts === NO_TIMESTAMP) {
      throw new JobDefinitionError(
        `interval join '${this.ctx.name}' (uid ${this.ctx.uid}): a record has no event time; an interval join needs timestamps (a WatermarkStrategy)`,
      );
    }
    if (ts < this.timers.currentWatermark()) {
      this.lateRecordsDropped++;
      return;
    }
    const { lowerMs, upperMs } = this.spec;
    if (input === 0) {
      append(this.left, ts, record);
      for (const [rts, rights] of this.right.entries()) {
        if (rts < ts + lowerMs || rts > ts + upperMs) continue;
        for (const r of rights) this.join(record, ts, r, rts);
      }
      this.timers.registerEventTimeTimer(LEFT, upperMs > 0 ? ts + upperMs : ts);
    } else {
      append(this.right, ts, record);
      for (const [lts, lefts] of this.left.entries()) {
        if (ts < lts + lowerMs || ts > lts + upperMs) continue;
        for (const l of lefts) this.join(l, lts, record, ts);
      }
      this.timers.registerEventTimeTimer(RIGHT, lowerMs < 0 ? ts - lowerMs : ts);
    }
    this.ctx.timestamps.current = ts;
  }

  private join(left: unknown, lts: number, right: unknown, rts: number): void {
    this.leftTimestamp = lts;
    this.rightTimestamp = rts;
    this.timestamp = Math.max(lts, rts);
    this.ctx.timestamps.current = this.timestamp;
    this.fn.processElement(left, right, this, this.ctx.output);
  }

  output<X>(tag: OutputTag<X>, value: X): void {
    this.ctx.output.sideOutput(tag.id, value);
  }

  onEventTime(_key: Key, _keyGroup: KeyGroup, namespace: string, timeMs: number): void {
    const { lowerMs, upperMs } = this.spec;
    if (namespace === LEFT) this.left.remove(upperMs > 0 ? timeMs - upperMs : timeMs);
    else this.right.remove(lowerMs < 0 ? timeMs + lowerMs : timeMs);
  }

  onProcessingTime(): void {}

  override snapshotState(checkpointId: import('../../core/ids.ts').CheckpointId): void {
    this.timers.snapshot();
    this.fn.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: import('../../core/ids.ts').CheckpointId): void {
    this.fn.notifyCheckpointComplete?.(checkpointId);
  }

  override close(): void {
    this.fn.close?.();
  }
}

/** Appends to the bucket of `ts` (a new array: state values are never mutated in place). */
function append(buffer: MapState<number, unknown[]>, ts: number, record: unknown): void {
  const bucket = buffer.get(ts);
  buffer.put(ts, bucket === undefined ? [record] : [...bucket, record]);
}
