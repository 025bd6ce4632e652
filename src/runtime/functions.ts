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
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from '../state/state.ts';

export interface Collector<T> {
  collect(record: T): void;
}

/** What a function can reach when it opens: its subtask, keyed state (keyed streams only), operator state. */
export interface RuntimeContext {
  readonly uid: string;
  readonly subtaskIndex: number;
  readonly parallelism: number;
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
  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  getMapState<K extends string | number, V>(descriptor: MapStateDescriptor<K, V>): MapState<K, V>;
  getReducingState<T>(descriptor: ReducingStateDescriptor<T>): ReducingState<T>;
  getAggregatingState<IN, ACC, OUT>(descriptor: AggregatingStateDescriptor<IN, ACC, OUT>): AggregatingState<IN, OUT>;
  /** Non-keyed list state, split evenly over subtasks on rescale. */
  getOperatorListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  /** Non-keyed list state, given whole to every subtask on rescale. */
  getUnionListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
}

export interface RichFunction {
  open?(ctx: RuntimeContext): void;
  close?(): void;
  /** Called in the sync phase of a checkpoint, before state is captured. */
  snapshotState?(checkpointId: number): void;
  notifyCheckpointComplete?(checkpointId: number): void;
}

export interface ProcessContext<K = Key> {
  /** The key of the current record on keyed streams; undefined otherwise. */
  readonly currentKey: K;
  readonly subtaskIndex: number;
}

export interface ProcessFunction<IN, OUT> extends RichFunction {
  processElement(value: IN, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  /** All input has been read (bounded jobs). */
  endInput?(out: Collector<OUT>): void;
}

export interface KeyedProcessFunction<K extends Key, IN, OUT> extends RichFunction {
  processElement(value: IN, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  endInput?(out: Collector<OUT>): void;
}

export interface CoProcessFunction<IN1, IN2, OUT> extends RichFunction {
  processElement1(value: IN1, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  processElement2(value: IN2, ctx: ProcessContext<never>, out: Collector<OUT>): void;
  endInput?(out: Collector<OUT>): void;
}

export interface KeyedCoProcessFunction<K extends Key, IN1, IN2, OUT> extends RichFunction {
  processElement1(value: IN1, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  processElement2(value: IN2, ctx: ProcessContext<K>, out: Collector<OUT>): void;
  endInput?(out: Collector<OUT>): void;
}
