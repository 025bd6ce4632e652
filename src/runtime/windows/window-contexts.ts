/**
 * The contexts the window operator hands to triggers and window functions. One object each per
 * operator, re-pointed at a window (`on`) before every call, so firing allocates no context.
 * Their state is MapState of the operator keyed by the window namespace: scoped to (key, window).
 */
import type { ValueStateDescriptor } from '../../state/descriptors.ts';
import type { MapState, ValueState } from '../../state/state.ts';
import type { RuntimeContext } from '../functions.ts';
import type { OutputTag } from '../output-tag.ts';
import type { InternalTimerService } from '../time/timer-service.ts';
import type { OnMergeContext, TriggerState } from './trigger.ts';
import type { KeyedStateStore, WindowContext, WindowStateStore } from './window-functions.ts';
import { namespaceOf, type Window } from './window.ts';

type MapStateOf = (name: string) => MapState<string, unknown>;

/** A value state over a MapState keyed by the namespace the owner points at. */
class NamespacedValueState<T> implements ValueState<T>, TriggerState<T> {
  constructor(
    private readonly map: MapState<string, unknown>,
    private readonly owner: { ns: string },
    private readonly defaultValue: T | undefined,
  ) {}
  value(): T | undefined {
    const v = this.map.get(this.owner.ns) as T | undefined;
    return v === undefined ? this.defaultValue : v;
  }
  update(value: T): void {
    if (value === undefined) this.map.remove(this.owner.ns);
    else this.map.put(this.owner.ns, value);
  }
  clear(): void {
    this.map.remove(this.owner.ns);
  }
}

export class TriggerContextImpl implements OnMergeContext {
  ns = '';
  /** The namespaces of the windows merged away, during `onMerge` only. */
  mergedNamespaces: readonly string[] = [];
  private readonly states = new Map<string, NamespacedValueState<unknown>>();

  constructor(
    private readonly timers: InternalTimerService,
    private readonly mapState: MapStateOf,
  ) {}

  on(window: Window): this {
    this.ns = namespaceOf(window);
    return this;
  }

  currentWatermark(): number {
    return this.timers.currentWatermark();
  }
  currentProcessingTime(): number {
    return this.timers.currentProcessingTime();
  }
  registerEventTimeTimer(timeMs: number): void {
    this.timers.registerEventTimeTimer(this.ns, timeMs);
  }
  deleteEventTimeTimer(timeMs: number): void {
    this.timers.deleteEventTimeTimer(this.ns, timeMs);
  }
  registerProcessingTimeTimer(timeMs: number): void {
    this.timers.registerProcessingTimeTimer(this.ns, timeMs);
  }
  deleteProcessingTimeTimer(timeMs: number): void {
    this.timers.deleteProcessingTimeTimer(this.ns, timeMs);
  }

  getState<T>(name: string): TriggerState<T> {
    let state = this.states.get(name);
    if (!state) this.states.set(name, (state = new NamespacedValueState<unknown>(this.mapState(name), this, undefined)));
    return state as TriggerState<T>;
  }

  mergedStateValues<T>(name: string): T[] {
    const map = this.mapState(name);
    const out: T[] = [];
    for (const ns of this.mergedNamespaces) {
      const v = map.get(ns);
      if (v !== undefined) out.push(v as T);
    }
    return out;
  }
}

export class WindowContextImpl implements WindowContext<Window>, WindowStateStore {
  ns = '';
  window: Window = null as unknown as Window;
  private readonly states = new Map<string, NamespacedValueState<unknown>>();
  private readonly global: KeyedStateStore;

  constructor(
    private readonly timers: InternalTimerService,
    private readonly mapState: MapStateOf,
    runtime: RuntimeContext,
    private readonly emitSide: (tagId: string, value: unknown) => void,
  ) {
    this.global = runtime;
  }

  on(window: Window): this {
    this.window = window;
    this.ns = namespaceOf(window);
    return this;
  }

  currentWatermark(): number {
    return this.timers.currentWatermark();
  }
  currentProcessingTime(): number {
    return this.timers.currentProcessingTime();
  }
  windowState(): WindowStateStore {
    return this;
  }
  globalState(): KeyedStateStore {
    return this.global;
  }
  output<X>(tag: OutputTag<X>, value: X): void {
    this.emitSide(tag.id, value);
  }

  getState<T>(descriptor: ValueStateDescriptor<T>): ValueState<T> {
    let state = this.states.get(descriptor.name);
    if (!state) {
      state = new NamespacedValueState<unknown>(this.mapState(descriptor.name), this, descriptor.defaultValue);
      this.states.set(descriptor.name, state);
    }
    return state as ValueState<T>;
  }
}
