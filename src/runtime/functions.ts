/**
 * User function types. The API re-exports them; operators in runtime/ call them. A function object
 * may keep state handles it got in `open`; it is built anew in every process and attempt.
 */
import type {
  AggregatingStateDescriptor,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  ValueStateDescriptor,
} from '../state/descriptors.ts';
import type { Key } from '../state/key-groups.ts';
import type { Clock } from '../core/time.ts';
import type { OutputTag } from './output-tag.ts';
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from '../state/state.ts';

/** Where a function emits its output records. */
export interface Collector<T> {
  /** Emits one record downstream. */
  collect(record: T): void;
}

/** What a function can reach when it opens: its subtask, keyed state (keyed streams only), operator state. */
export interface RuntimeContext {
  /** The operator's uid (state is mapped by it). */
  readonly uid: string;
  /** This subtask's index, 0 to parallelism - 1. */
  readonly subtaskIndex: number;
  /** Subtasks of this operator. */
  readonly parallelism: number;
  /** Key groups of the job (the highest parallelism a restore can use). */
  readonly maxParallelism: number;
  /** How many times the job restarted before this attempt (0 on the first run). */
  readonly attempt: number;
  /**
   * Names this run of the subtask uniquely across attempts, processes and restores (a random part
   * drawn once per process plus the attempt). Name anything a run creates and a later run must not
   * mistake for its own — in-progress files, transaction ids — with it.
   */
  readonly runId: string;
  /** Whether this operator's state was restored from a snapshot (it may still be empty). */
  readonly restored: boolean;
  /** The job's clock (virtual under the simulator): use it instead of Date.now. */
  readonly clock: Clock;
  /**
   * Keyed value state: one value per key, scoped to the current record's key (keyed streams only).
   * @throws ConfigError on a non-keyed stream, or when the name is registered with another kind of state.
   */
  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  /** Keyed list state: a list per key (keyed streams only). @throws ConfigError as `getState`. */
  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  /** Keyed map state: a map per key (keyed streams only). @throws ConfigError as `getState`. */
  getMapState<K extends string | number, V>(descriptor: MapStateDescriptor<K, V>): MapState<K, V>;
  /** Keyed state that folds added values with a reduce function (keyed streams only). @throws ConfigError as `getState`. */
  getReducingState<T>(descriptor: ReducingStateDescriptor<T>): ReducingState<T>;
  /** Keyed state that aggregates added values through an accumulator (keyed streams only). @throws ConfigError as `getState`. */
  getAggregatingState<IN, ACC, OUT>(descriptor: AggregatingStateDescriptor<IN, ACC, OUT>): AggregatingState<IN, OUT>;
  /** Non-keyed list state, split evenly over subtasks on rescale. */
  getOperatorListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  /** Non-keyed list state, given whole to every subtask on rescale. */
  getUnionListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
}

/** Lifecycle methods every user function may have. */
export interface RichFunction {
  /** Called once per subtask and attempt before the first record: get state handles here. */
  open?(ctx: RuntimeContext): void;
  /** Called when the subtask ends (finished, cancelled or failed). */
  close?(): void;
  /** Called in the sync phase of a checkpoint, before state is captured: flush anything held outside state. */
  snapshotState?(checkpointId: number): void;
  /** Called once checkpoint `checkpointId` completed (durably written); side effects may be committed now. */
  notifyCheckpointComplete?(checkpointId: number): void;
}

/** What a function sees with each record. */
export interface ProcessContext<K = Key> {
  /** The key of the current record on keyed streams; undefined otherwise. */
  readonly currentKey: K;
  /** This subtask's index. */
  readonly subtaskIndex: number;
  /** Emits `value` to the side output `tag` (read with `stream.getSideOutput(tag)`; dropped when nothing reads it). */
  output<X>(tag: OutputTag<X>, value: X): void;
  /** The current record's event time in milliseconds, or undefined when it has none (no timestamp assigner upstream). */
  readonly timestamp: number | undefined;
  /**
   * The timers of the current key (keyed streams only, as in Flink).
   * @throws ConfigError on a non-keyed stream.
   */
  timerService(): TimerService;
}

/**
 * Timers of a keyed process function, for the current key. A timer is kept once per (key, time):
 * registering it again does nothing. Timers are keyed state: they are checkpointed, restored and
 * move with their key on rescale; `onTimer` is called with the key current.
 */
export interface TimerService {
  /** Calls `onTimer(timestampMs, ...)` once the watermark reaches `timestampMs`. */
  registerEventTimeTimer(timestampMs: number): void;
  /** Removes an event-time timer of the current key (absent: nothing happens). */
  deleteEventTimeTimer(timestampMs: number): void;
  /** Calls `onTimer(timestampMs, ...)` once the job's clock (virtual under the simulator) reaches `timestampMs`. */
  registerProcessingTimeTimer(timestampMs: number): void;
  /** Removes a processing-time timer of the current key. */
  deleteProcessingTimeTimer(timestampMs: number): void;
  /** The operator's input watermark in milliseconds (-Infinity before the first). */
  currentWatermark(): number;
  /** The job's clock in milliseconds. */
  currentProcessingTime(): number;
}

/** What `onTimer` sees: the timer's key is current (keyed state is scoped to it). */
export interface OnTimerContext<K = Key> extends ProcessContext<K> {
  /** Whether the timer was an event-time or a processing-time timer. */
  readonly timeDomain: 'event-time' | 'processing-time';
}

/** A one-input function on a non-keyed stream (`DataStream.process`). */
export interface ProcessFunction<IN, OUT> extends RichFunction {
  /** Called for every record; emits any number of records through `out`. A throw fails the task (and restarts the job). */
  processElement(value: IN, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  /** All input has been read (bounded jobs); may emit final records. */
  endInput?(out: Collector<OUT>): void;
}

/** A one-input function on a keyed stream (`KeyedStream.process`): keyed state is scoped to `ctx.currentKey`. */
export interface KeyedProcessFunction<K extends Key, IN, OUT> extends RichFunction {
  /** Called for every record, with its key current. A throw fails the task (and restarts the job). */
  processElement(value: IN, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  /**
   * A timer registered through `ctx.timerService()` fired: `timestampMs` is its time; records
   * emitted carry it as their event time (event-time timers). The timer's key is current.
   */
  onTimer?(timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>): void;
  /** All input has been read (bounded jobs); may emit final records. */
  endInput?(out: Collector<OUT>): void;
}

/** A two-input function on connected non-keyed streams (`ConnectedStreams.process`). */
export interface CoProcessFunction<IN1, IN2, OUT> extends RichFunction {
  /** Called for every record of the first input. */
  processElement1(value: IN1, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  /** Called for every record of the second input. */
  processElement2(value: IN2, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  /** Both inputs have been read (bounded jobs). */
  endInput?(out: Collector<OUT>): void;
}

/** A two-input function on two keyed streams: keyed state is shared by both inputs for the same key. */
export interface KeyedCoProcessFunction<K extends Key, IN1, IN2, OUT> extends RichFunction {
  /** Called for every record of the first input, with its key current. */
  processElement1(value: IN1, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  /** Called for every record of the second input, with its key current. */
  processElement2(value: IN2, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  /** A timer registered through `ctx.timerService()` fired, with its key current (as KeyedProcessFunction.onTimer). */
  onTimer?(timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>): void;
  /** Both inputs have been read (bounded jobs). */
  endInput?(out: Collector<OUT>): void;
}
