/**
 * WindowedStream: a keyed stream cut into windows (`KeyedStream.window`), configured with a
 * trigger, an evictor, allowed lateness and a side output for late data, and ended by the
 * function evaluated per window: reduce, aggregate or process (or an incremental one with process).
 */
import { JobDefinitionError } from '../core/errors.ts';
import type { OutputTag } from '../runtime/output-tag.ts';
import type { WindowAssigner } from '../runtime/windows/assigners.ts';
import type { Evictor } from '../runtime/windows/evictors.ts';
import type { Trigger } from '../runtime/windows/trigger.ts';
import type { ContentsLayout } from '../runtime/windows/window-contents.ts';
import type { ProcessWindowFunction } from '../runtime/windows/window-functions.ts';
import { WindowOperator, type WindowOperatorSpec } from '../runtime/windows/window-operator.ts';
import type { Window } from '../runtime/windows/window.ts';
import type { AggregateFunction } from '../state/descriptors.ts';
import type { Key } from '../state/key-groups.ts';
import type { DataStream, KeyedStream } from './data-stream.ts';

/** A keyed stream with a window assigner; call `reduce`, `aggregate` or `process` to evaluate windows. */
export class WindowedStream<T, K extends Key, W extends Window> {
  private triggerFn: Trigger<T, W>;
  private evictorFn: Evictor<T, W> | null = null;
  private latenessMs = 0;
  private lateTag: OutputTag<T> | null = null;

  /** @internal */
  constructor(
    private readonly input: KeyedStream<T, K>,
    private readonly assigner: WindowAssigner<T, W>,
  ) {
    this.triggerFn = assigner.defaultTrigger();
  }

  /**
   * Replaces the assigner's default trigger (event time, processing time, or never for global windows).
   * @throws JobDefinitionError when the windows merge (sessions) and the trigger cannot merge.
   */
  trigger(trigger: Trigger<T, W>): this {
    if (this.assigner.isMerging && !trigger.canMerge)
      throw new JobDefinitionError(`trigger: ${this.assigner} merges windows; the trigger cannot merge (canMerge is false)`);
    this.triggerFn = trigger;
    return this;
  }

  /** Removes elements before or after each evaluation; windows then keep every element (no incremental aggregation). */
  evictor(evictor: Evictor<T, W>): this {
    this.evictorFn = evictor;
    return this;
  }

  /**
   * Keeps each event-time window `lateMs` past its end: a late element within it fires the window
   * again with the updated result; later elements are dropped (or sent to `sideOutputLateData`).
   * State is removed at window end + lateness. Default 0.
   * @throws JobDefinitionError when `lateMs` is negative or not an integer, or > 0 on processing-time windows.
   */
  allowedLateness(lateMs: number): this {
    if (!Number.isInteger(lateMs) || lateMs < 0) throw new JobDefinitionError(`allowedLateness: must be an integer >= 0 of milliseconds, got ${lateMs}`);
    if (lateMs > 0 && !this.assigner.isEventTime)
      throw new JobDefinitionError(`allowedLateness: ${this.assigner} is not in event time; lateness applies to event-time windows only`);
    this.latenessMs = lateMs;
    return this;
  }

  /** Sends elements too late for any window (after the allowed lateness) to the side output `tag` instead of dropping them. */
  sideOutputLateData(tag: OutputTag<T>): this {
    this.lateTag = tag;
    return this;
  }

  /**
   * Folds each window's elements with `reducer` incrementally (one value kept per window) and emits
   * the result when the window fires; with `createProcess`, hands that one value to a process
   * window function (window metadata, state) instead. Results carry the window's last millisecond as their time.
   */
  reduce(reducer: (a: T, b: T) => T): DataStream<T>;
  reduce<R>(reducer: (a: T, b: T) => T, createProcess: () => ProcessWindowFunction<T, R, K, W>): DataStream<R>;
  reduce<R>(reducer: (a: T, b: T) => T, createProcess?: () => ProcessWindowFunction<T, R, K, W>): DataStream<R> {
    const reduce = reducer as (a: unknown, b: unknown) => unknown;
    const fold = (values: readonly unknown[]) => values.reduce((a, b) => reduce(a, b));
    return this.build('window-reduce', { kind: 'reduce', reduce }, fold, null, createProcess ?? null);
  }

  /**
   * Aggregates each window's elements incrementally into an accumulator and emits its result when
   * the window fires; with `createProcess`, hands the result to a process window function instead.
   * @throws JobDefinitionError on merging (session) windows when the function has no `merge`.
   */
  aggregate<ACC, V>(aggregate: AggregateFunction<T, ACC, V>): DataStream<V>;
  aggregate<ACC, V, R>(aggregate: AggregateFunction<T, ACC, V>, createProcess: () => ProcessWindowFunction<V, R, K, W>): DataStream<R>;
  aggregate<ACC, V, R>(aggregate: AggregateFunction<T, ACC, V>, createProcess?: () => ProcessWindowFunction<V, R, K, W>): DataStream<R> {
    if (this.assigner.isMerging && !aggregate.merge && !this.evictorFn) {
      throw new JobDefinitionError(`aggregate: ${this.assigner} merges windows, so the AggregateFunction needs merge(a, b)`);
    }
    const agg = aggregate as unknown as AggregateFunction<unknown, unknown, unknown>;
    const fold = (values: readonly unknown[]) => agg.getResult(values.reduce((acc, v) => agg.add(v, acc), agg.createAccumulator()));
    return this.build('window-aggregate', { kind: 'aggregate', aggregate: agg }, fold, (acc) => agg.getResult(acc), createProcess ?? null);
  }

  /** Hands all elements of each firing window, with the window and key, to a process window function. */
  process<R>(createProcess: () => ProcessWindowFunction<T, R, K, W>): DataStream<R> {
    return this.build('window-process', { kind: 'list' }, null, null, createProcess);
  }

  private build<R>(
    name: string,
    incremental: ContentsLayout,
    fold: ((values: readonly unknown[]) => unknown) | null,
    result: ((acc: unknown) => unknown) | null,
    createProcess: (() => ProcessWindowFunction<never, R, K, W>) | null,
  ): DataStream<R> {
    const withEvictor = this.evictorFn !== null;
    const spec: WindowOperatorSpec = {
      assigner: this.assigner as WindowAssigner<unknown, Window>,
      trigger: this.triggerFn as Trigger<unknown, Window>,
      evictor: this.evictorFn as Evictor<unknown, Window> | null,
      allowedLatenessMs: this.latenessMs,
      lateDataTag: this.lateTag as OutputTag<unknown> | null,
      keySelector: this.input.keySelector as (r: unknown) => Key,
      layout: withEvictor ? { kind: 'list' } : incremental,
      fold: withEvictor || incremental.kind === 'list' ? fold : null,
      result: withEvictor ? null : result,
      createProcessFunction: createProcess as WindowOperatorSpec['createProcessFunction'],
    };
    return this.input.keyedOperator<R>(name, () => new WindowOperator(spec));
  }
}
