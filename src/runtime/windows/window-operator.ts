/**
 * The window operator: assigns each element of a keyed stream to windows, keeps their contents,
 * asks the trigger when to fire and purge, and evaluates the window function. Everything it keeps
 * is keyed state of the operator — contents (`window-contents`), the merging-window set of session
 * windows (`window-merging-set`), trigger state (`window-trigger/<name>`), per-window user state
 * (`window-state/<name>`) — and its timers live in the operator's timer service with the window's
 * namespace, so all of it is in every snapshot, restored, and redistributed by key group. Its
 * watermark survives a restore (restored-watermark.ts), so what is late does not depend on failures.
 */
import { JobDefinitionError } from '../../core/errors.ts';
import { keyGroup as asKeyGroup, type KeyGroup } from '../../core/ids.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import { MapStateDescriptor, ValueStateDescriptor } from '../../state/descriptors.ts';
import type { Key } from '../../state/key-groups.ts';
import type { MapState, ValueState } from '../../state/state.ts';
import type { Collector } from '../functions.ts';
import { AbstractStreamOperator } from '../operator.ts';
import { createRuntimeContext } from '../operators/runtime-context.ts';
import type { OutputTag } from '../output-tag.ts';
import type { Triggerable } from '../time/timer-service.ts';
import type { WindowAssigner } from './assigners.ts';
import type { Evictor, TimestampedValue } from './evictors.ts';
import { type MergeCallback, type MergingWindowSet, MergingWindowSets, type PersistedMergingSet } from './merging-window-set.ts';
import { RestoredWatermarkTimers } from './restored-watermark.ts';
import type { Trigger, TriggerResult } from './trigger.ts';
import { WindowContents, type ContentsLayout } from './window-contents.ts';
import { TriggerContextImpl, WindowContextImpl } from './window-contexts.ts';
import type { ProcessWindowFunction } from './window-functions.ts';
import { namespaceOf, type TimeWindow, type Window, windowOfNamespace } from './window.ts';

/**
 * What a firing evaluates: the elements (list layout) or the single reduced value or aggregate
 * result, turned into output by an optional process window function.
 */
export interface WindowOperatorSpec {
  readonly assigner: WindowAssigner<unknown, Window>;
  readonly trigger: Trigger<unknown, Window>;
  readonly evictor: Evictor<unknown, Window> | null;
  readonly allowedLatenessMs: number;
  readonly lateDataTag: OutputTag<unknown> | null;
  readonly keySelector: (record: unknown) => Key;
  /** How contents are kept; with an evictor always `list`. */
  readonly layout: ContentsLayout;
  /**
   * For `list` layouts without a process function (reduce/aggregate with an evictor): folds the
   * elements into the one value handed on. Null otherwise.
   */
  readonly fold: ((values: readonly unknown[]) => unknown) | null;
  /** Emits the result; null: emit the single value (reduce) or aggregate result as is. */
  readonly createProcessFunction: (() => ProcessWindowFunction<unknown, unknown, Key, Window>) | null;
  /** For the aggregate layout: turns an accumulator into the value handed on. */
  readonly result: ((accumulator: unknown) => unknown) | null;
}

export const WINDOW_TIMERS = 'window-timers';

const NO_NAMESPACES: readonly string[] = [];

export class WindowOperator extends AbstractStreamOperator implements Triggerable {
  private backend!: KeyedStateBackend;
  private timers!: RestoredWatermarkTimers;
  private contents!: WindowContents;
  private mergingState: ValueState<PersistedMergingSet> | null = null;
  private mergingSets: MergingWindowSets | null = null;
  private fn: ProcessWindowFunction<unknown, unknown, Key, Window> | null = null;
  private triggerCtx!: TriggerContextImpl;
  private windowCtx!: WindowContextImpl;
  private currentKey: Key = '';
  private readonly out: Collector<unknown>;
  /** Elements dropped as late (no side output for late data). */
  lateRecordsDropped = 0;

  constructor(private readonly spec: WindowOperatorSpec) {
    super();
    this.out = { collect: (r) => this.ctx.output.collect(r) };
  }

  override open(): void {
    const backend = this.ctx.keyedBackend;
    if (!backend) throw new JobDefinitionError(`window operator '${this.ctx.name}' (uid ${this.ctx.uid}) must follow keyBy`);
    this.backend = backend;
    this.ctx.timestamps.markTimed(); // emits with window / record event time
    this.timers = new RestoredWatermarkTimers(
      this.ctx.getInternalTimerService(WINDOW_TIMERS, this),
      this.ctx.operatorState,
      this.ctx.keyedBackend?.keyGroupRange ?? null,
    );
    this.contents = new WindowContents(
      backend.getState<MapState<string, unknown>>(new MapStateDescriptor<string, unknown>('window-contents')),
      this.spec.layout,
    );
    if (this.spec.assigner.isMerging) {
      this.mergingState = backend.getState<ValueState<PersistedMergingSet>>(new ValueStateDescriptor<PersistedMergingSet>('window-merging-set'));
      this.mergingSets = new MergingWindowSets(this.spec.assigner);
    }
    const mapState = (name: string) => backend.getState<MapState<string, unknown>>(new MapStateDescriptor<string, unknown>(name));
    this.triggerCtx = new TriggerContextImpl(this.timers, (name) => mapState(`window-trigger/${name}`));
    const runtime = createRuntimeContext(this.ctx);
    this.windowCtx = new WindowContextImpl(
      this.timers,
      (name) => mapState(`window-state/${name}`),
      runtime,
      (tagId, value) => this.ctx.output.sideOutput(tagId, value),
    );
    if (this.spec.createProcessFunction) {
      this.fn = this.spec.createProcessFunction();
      this.fn.open?.(runtime);
    }
  }

  processElement(record: unknown, keyGroup: number, _input: number): void {
    const key = this.spec.keySelector(record);
    this.currentKey = key;
    this.backend.setCurrentKey(key, asKeyGroup(keyGroup));
    const timestamps = this.ctx.timestamps;
    const ts = timestamps.current;
    const assigner = this.spec.assigner;
    if (assigner.isEventTime && ts === NO_TIMESTAMP) {
      throw new JobDefinitionError(
        `window operator '${this.ctx.name}' (uid ${this.ctx.uid}): a record has no event time; event-time windows need timestamps (a WatermarkStrategy on the source or assignTimestampsAndWatermarks)`,
      );
    }
    const windows = assigner.assignWindows(record, ts, this.timers);
    let skipped = true;
    if (this.mergingState) {
      const set = this.mergingSets!.load(key, this.mergingState.value());
      for (const w of windows) {
        const actual = set.addWindow(w as TimeWindow, this.onMerge);
        if (this.isWindowLate(actual)) {
          set.retireWindow(actual);
          continue;
        }
        skipped = false;
        const stateNs = namespaceOf(set.getStateWindow(actual)!);
        this.contents.add(stateNs, record, ts);
        this.onTriggerResult(this.spec.trigger.onElement(record, ts, actual, this.triggerCtx.on(actual)), stateNs, actual);
        this.registerCleanupTimer(actual);
      }
      if (set.isChanged) this.saveMergingSet(key, set);
    } else {
      for (const w of windows) {
        if (this.isWindowLate(w)) continue;
        skipped = false;
        const ns = namespaceOf(w);
        this.contents.add(ns, record, ts);
        this.onTriggerResult(this.spec.trigger.onElement(record, ts, w, this.triggerCtx.on(w)), ns, w);
        this.registerCleanupTimer(w);
      }
    }
    timestamps.current = ts;
    if (skipped && this.isElementLate(ts)) {
      if (this.spec.lateDataTag) this.ctx.output.sideOutput(this.spec.lateDataTag.id, record);
      else this.lateRecordsDropped++;
    }
  }

  onEventTime(key: Key, _keyGroup: KeyGroup, namespace: string, timeMs: number): void {
    this.onTimer(key, namespace, timeMs, true);
  }

  onProcessingTime(key: Key, _keyGroup: KeyGroup, namespace: string, timeMs: number): void {
    this.onTimer(key, namespace, timeMs, false);
  }

  private onTimer(key: Key, namespace: string, timeMs: number, eventTime: boolean): void {
    this.currentKey = key;
    const window = windowOfNamespace(namespace);
    let stateNs = namespace;
    let set: MergingWindowSet | null = null;
    if (this.mergingState) {
      set = this.mergingSets!.load(key, this.mergingState.value());
      const stateWindow = set.getStateWindow(window as TimeWindow);
      if (stateWindow === undefined) return; // a timer of a window that merged into another
      stateNs = namespaceOf(stateWindow);
    }
    const tctx = this.triggerCtx.on(window);
    const result = eventTime ? this.spec.trigger.onEventTime(timeMs, window, tctx) : this.spec.trigger.onProcessingTime(timeMs, window, tctx);
    this.onTriggerResult(result, stateNs, window);
    if (eventTime === this.spec.assigner.isEventTime && timeMs === this.cleanupTime(window)) this.clearAllState(window, stateNs, set);
    if (set?.isChanged) this.saveMergingSet(key, set);
  }

  /** Fires and purges as the trigger decided. */
  private onTriggerResult(result: TriggerResult, stateNs: string, window: Window): void {
    if (result === 'CONTINUE') return;
    if (result === 'FIRE' || result === 'FIRE_AND_PURGE') this.fire(window, stateNs);
    if (result === 'PURGE' || result === 'FIRE_AND_PURGE') this.contents.clear(stateNs);
  }

  private fire(window: Window, stateNs: string): void {
    if (!this.contents.has(stateNs)) return;
    const spec = this.spec;
    let input: readonly unknown[];
    if (spec.layout.kind === 'list') {
      let elements: readonly TimestampedValue<unknown>[] = this.contents.elements(stateNs);
      const before = elements.length;
      if (spec.evictor?.evictBefore) elements = spec.evictor.evictBefore(elements, window, this.timers);
      const values = elements.map((e) => e.value);
      input = spec.fold ? [spec.fold(values)] : values;
      this.emit(window, input);
      let kept = elements;
      if (spec.evictor?.evictAfter) kept = spec.evictor.evictAfter(elements, window, this.timers);
      if (kept.length !== before) this.contents.replaceElements(stateNs, kept);
      return;
    }
    const single = this.contents.single(stateNs);
    input = [spec.result ? spec.result(single) : single];
    this.emit(window, input);
  }

  private emit(window: Window, input: readonly unknown[]): void {
    if (window.kind === 'time') this.ctx.timestamps.current = window.maxTimestamp();
    if (this.fn) this.fn.process(this.currentKey, this.windowCtx.on(window), input, this.out);
    else for (const value of input) this.out.collect(value);
  }

  /** The merge callback of the merging-window set (one function, not a closure per element). */
  private readonly onMerge: MergeCallback = (result, merged, stateResult, mergedStates) =>
    this.merge(result, merged, namespaceOf(stateResult), mergedStates.length === 0 ? NO_NAMESPACES : mergedStates.map(namespaceOf));

  private merge(result: TimeWindow, merged: readonly TimeWindow[], stateResult: string, mergedStates: readonly string[]): void {
    const tctx = this.triggerCtx.on(result);
    tctx.mergedNamespaces = merged.map(namespaceOf);
    this.spec.trigger.onMerge?.(result, tctx);
    tctx.mergedNamespaces = NO_NAMESPACES;
    for (const m of merged) {
      this.spec.trigger.clear(m, this.triggerCtx.on(m));
      this.deleteCleanupTimer(m);
    }
    this.contents.mergeInto(stateResult, mergedStates);
  }

  private clearAllState(window: Window, stateNs: string, set: MergingWindowSet | null): void {
    this.contents.clear(stateNs);
    this.spec.trigger.clear(window, this.triggerCtx.on(window));
    this.fn?.clear?.(this.windowCtx.on(window));
    if (set) set.retireWindow(window as TimeWindow);
  }

  private saveMergingSet(key: Key, set: MergingWindowSet): void {
    const value = this.mergingSets!.save(key, set);
    if (value === undefined) this.mergingState!.clear();
    else this.mergingState!.update(value);
  }

  /**
   * When a window's state is removed: its last millisecond plus the allowed lateness (event time),
   * or once the clock reached its end (processing time: the window is open through its last millisecond).
   */
  private cleanupTime(window: Window): number {
    if (window.kind === 'global') return Number.POSITIVE_INFINITY;
    return this.spec.assigner.isEventTime ? window.maxTimestamp() + this.spec.allowedLatenessMs : window.end;
  }

  private registerCleanupTimer(window: Window): void {
    const time = this.cleanupTime(window);
    if (time === Number.POSITIVE_INFINITY) return; // the global window lives for ever
    if (this.spec.assigner.isEventTime) this.timers.registerEventTimeTimer(namespaceOf(window), time);
    else this.timers.registerProcessingTimeTimer(namespaceOf(window), time);
  }

  private deleteCleanupTimer(window: Window): void {
    const time = this.cleanupTime(window);
    if (time === Number.POSITIVE_INFINITY) return;
    if (this.spec.assigner.isEventTime) this.timers.deleteEventTimeTimer(namespaceOf(window), time);
    else this.timers.deleteProcessingTimeTimer(namespaceOf(window), time);
  }

  private isWindowLate(window: Window): boolean {
    return this.spec.assigner.isEventTime && this.cleanupTime(window) <= this.timers.currentWatermark();
  }

  private isElementLate(ts: number): boolean {
    return this.spec.assigner.isEventTime && ts + this.spec.allowedLatenessMs <= this.timers.currentWatermark();
  }

  override snapshotState(checkpointId: import('../../core/ids.ts').CheckpointId): void {
    this.timers.snapshot();
    this.fn?.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: import('../../core/ids.ts').CheckpointId): void {
    this.fn?.notifyCheckpointComplete?.(checkpointId);
  }

  override close(): void {
    this.fn?.close?.();
  }
}
