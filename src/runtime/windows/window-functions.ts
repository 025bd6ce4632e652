/** The user functions a windowed stream evaluates when a window fires. */
import type { ValueStateDescriptor } from '../../state/descriptors.ts';
import type { Key } from '../../state/key-groups.ts';
import type { ValueState } from '../../state/state.ts';
import type { Collector, RichFunction, RuntimeContext } from '../functions.ts';
import type { OutputTag } from '../output-tag.ts';
import type { TimeWindow, Window } from './window.ts';

/** Keyed state of the current key shared by all its windows (`WindowContext.globalState`). */
export type KeyedStateStore = Pick<RuntimeContext, 'getState' | 'getListState' | 'getMapState' | 'getReducingState' | 'getAggregatingState'>;

/** Keyed state of the current key and window (`WindowContext.windowState`): value state only. */
export interface WindowStateStore {
  /**
   * Value state scoped to the current key and window. Clear it in `ProcessWindowFunction.clear`,
   * which runs when the window is removed.
   */
  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T>;
}

/** What a window function sees besides the elements. */
export interface WindowContext<W extends Window = TimeWindow> {
  /** The window being evaluated (`start`/`end` for time windows). */
  readonly window: W;
  /** The operator's event-time watermark in milliseconds. */
  currentWatermark(): number;
  /** The processing time in milliseconds (the job's Clock). */
  currentProcessingTime(): number;
  /** State of this key and window: e.g. what an earlier firing of the same window emitted. */
  windowState(): WindowStateStore;
  /** State of this key across its windows. */
  globalState(): KeyedStateStore;
  /** Emits `value` to the side output `tag`. */
  output<X>(tag: OutputTag<X>, value: X): void;
}

/**
 * Evaluates a window from all its elements (`WindowedStream.process`), or from the single result of
 * an incremental reduce or aggregate (`reduce(fn, processFn)`, `aggregate(agg, processFn)`).
 */
export interface ProcessWindowFunction<IN, OUT, K extends Key = Key, W extends Window = TimeWindow> extends RichFunction {
  /** Called when the window fires; emits any number of records through `out`. */
  process(key: K, ctx: WindowContext<W>, elements: readonly IN[], out: Collector<OUT>): void;
  /** Called when the window is removed (after its allowed lateness): clear its `windowState` here. */
  clear?(ctx: WindowContext<W>): void;
}
