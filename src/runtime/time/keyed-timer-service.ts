/**
 * The timer services of a keyed operator subtask. A timer is an entry of a keyed map state named
 * `_timers/<service>` under the timer's key (map key: domain, time, namespace), so timers are
 * deduplicated per (key, namespace, time), live per key group in whichever backend holds the state
 * (heap tables or the embedded store), are part of every full and incremental snapshot and
 * savepoint, and move with their key group on rescale. Per domain, a priority queue per key group
 * indexes them in memory (KeyGroupedTimerQueue); it is rebuilt from the state when the service is
 * created after a restore, and deletions are lazy (a popped entry whose state entry is gone is
 * skipped).
 */
import { keyGroup as asKeyGroup } from '../../core/ids.ts';
import type { Cancellable } from '../../core/time.ts';
import { MIN_WATERMARK, NO_TIMESTAMP } from '../../core/watermark.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import { MapStateDescriptor } from '../../state/descriptors.ts';
import { assignToKeyGroup } from '../../state/key-groups.ts';
import type { MapState } from '../../state/state.ts';
import type { ElementTimestamp } from './element-timestamp.ts';
import type { ProcessingTimeService } from './processing-time.ts';
import type { TimerEntry } from './timer-queue.ts';
import { KeyGroupedTimerQueue } from './key-grouped-timer-queue.ts';
import type { InternalTimeServiceManager, InternalTimerService, Triggerable } from './timer-service.ts';

/** Prefix of the keyed state that holds a timer service's timers (visible in `weir savepoint inspect`). */
export const TIMER_STATE_PREFIX = '_timers/';

type Domain = 'e' | 'p';

function timerKey(domain: Domain, timeMs: number, namespace: string): string {
  return `${domain}${timeMs}|${namespace}`;
}

function parseTimerKey(mk: string): { domain: Domain; timeMs: number; namespace: string } | null {
  const bar = mk.indexOf('|');
  const domain = mk[0];
  if (bar < 0 || (domain !== 'e' && domain !== 'p')) return null;
  const timeMs = Number(mk.slice(1, bar));
  if (Number.isNaN(timeMs)) return null;
  return { domain, timeMs, namespace: mk.slice(bar + 1) };
}

/** A queued timer with its map key in the timer state, so firing it builds no string. */
interface StoredTimer extends TimerEntry {
  readonly stateKey: string;
}

/** Namespaces a `TimerKeys` memo holds at most before it starts afresh. */
const TIMER_KEYS_MAX = 4096;

/** The two latest timer keys of one namespace (a window's trigger and cleanup timers differ with allowed lateness). */
interface RecentKeys {
  timeMs: number;
  key: string;
  olderTimeMs: number;
  olderKey: string;
}

/**
 * The timer state's map keys of one domain, memoised per namespace for its two latest times: a
 * window registers the same timers for every element it gets (the trigger's and the cleanup
 * timer), and a key built anew each time costs a concatenation and, in every map it is looked up
 * in, a fresh hash; the memoised string keeps its hash. Bounded: emptied when it holds
 * TIMER_KEYS_MAX namespaces (which forgets the windows that ended, too).
 */
class TimerKeys {
  private readonly memo = new Map<string, RecentKeys>();

  constructor(private readonly domain: Domain) {}

  of(timeMs: number, namespace: string): string {
    const memo = this.memo;
    const recent = memo.get(namespace);
    if (recent !== undefined) {
      if (recent.timeMs === timeMs) return recent.key;
      if (recent.olderTimeMs === timeMs) return recent.olderKey;
    }
    const key = timerKey(this.domain, timeMs, namespace);
    if (recent !== undefined) {
      recent.olderTimeMs = recent.timeMs;
      recent.olderKey = recent.key;
      recent.timeMs = timeMs;
      recent.key = key;
    } else {
      if (memo.size >= TIMER_KEYS_MAX) memo.clear();
      memo.set(namespace, { timeMs, key, olderTimeMs: Number.NaN, olderKey: '' });
    }
    return key;
  }
}

export class KeyedTimeServiceManager implements InternalTimeServiceManager {
  private readonly services = new Map<string, KeyedTimerService>();
  private watermark = MIN_WATERMARK;

  constructor(
    readonly backend: KeyedStateBackend,
    readonly processingTime: ProcessingTimeService,
    readonly timestamps: ElementTimestamp,
  ) {}

  getInternalTimerService(name: string, triggerable: Triggerable): InternalTimerService {
    let service = this.services.get(name);
    if (!service) {
      service = new KeyedTimerService(name, triggerable, this);
      this.services.set(name, service);
    }
    return service;
  }

  advanceWatermark(watermarkMs: number): void {
    if (watermarkMs <= this.watermark) return;
    this.watermark = watermarkMs;
    for (const service of this.services.values()) service.fireEventTimers(watermarkMs);
  }

  currentWatermark(): number {
    return this.watermark;
  }

  /** Pending timers per service and domain (tests, inspection). */
  pendingCounts(): Record<string, { eventTime: number; processingTime: number }> {
    const out: Record<string, { eventTime: number; processingTime: number }> = {};
    for (const [name, s] of this.services) out[name] = s.pendingCounts();
    return out;
  }

  dispose(): void {
    for (const service of this.services.values()) service.dispose();
  }
}

/** One named service: its state, its two queues, its processing-time wake-up. */
class KeyedTimerService implements InternalTimerService {
  private readonly state: MapState<string, number>;
  private readonly eventQueue = new KeyGroupedTimerQueue<StoredTimer>();
  private readonly processingQueue = new KeyGroupedTimerQueue<StoredTimer>();
  private readonly eventKeys = new TimerKeys('e');
  private readonly processingKeys = new TimerKeys('p');
  private wakeup: { timeMs: number; handle: Cancellable } | null = null;
  private readonly maxParallelism: number;

  constructor(
    name: string,
    private readonly triggerable: Triggerable,
    private readonly manager: KeyedTimeServiceManager,
  ) {
    const descriptor = new MapStateDescriptor<string, number>(TIMER_STATE_PREFIX + name);
    this.state = manager.backend.getState<MapState<string, number>>(descriptor);
    this.maxParallelism = manager.backend.maxParallelism;
    this.restore(descriptor.name);
  }

  /** Rebuilds the queues from the restored state (any key group this subtask now owns). */
  private restore(stateName: string): void {
    for (const [key, value] of this.manager.backend.entries(stateName)) {
      const keyGroup = asKeyGroup(assignToKeyGroup(key, this.maxParallelism));
      const mapKeys: unknown[] = value instanceof Map ? [...value.keys()] : Array.isArray(value) ? value.map((p) => (p as unknown[])[0]) : [];
      for (const mk of mapKeys) {
        if (typeof mk !== 'string') continue;
        const t = parseTimerKey(mk);
        if (t === null) continue;
        const entry: StoredTimer = { timeMs: t.timeMs, key, keyGroup, namespace: t.namespace, stateKey: mk };
        (t.domain === 'e' ? this.eventQueue : this.processingQueue).push(entry);
      }
    }
    this.scheduleWakeup();
  }

  private current(timeMs: number, namespace: string, stateKey: string): StoredTimer {
    const backend = this.manager.backend;
    return { timeMs, key: backend.getCurrentKey(), keyGroup: backend.getCurrentKeyGroup(), namespace, stateKey };
  }

  registerEventTimeTimer(namespace: string, timeMs: number): void {
    const mk = this.eventKeys.of(timeMs, namespace);
    if (this.state.contains(mk)) return;
    this.state.put(mk, 1);
    this.eventQueue.push(this.current(timeMs, namespace, mk));
  }

  deleteEventTimeTimer(namespace: string, timeMs: number): void {
    this.state.remove(this.eventKeys.of(timeMs, namespace));
  }

  registerProcessingTimeTimer(namespace: string, timeMs: number): void {
    const mk = this.processingKeys.of(timeMs, namespace);
    if (this.state.contains(mk)) return;
    this.state.put(mk, 1);
    this.processingQueue.push(this.current(timeMs, namespace, mk));
    this.scheduleWakeup();
  }

  deleteProcessingTimeTimer(namespace: string, timeMs: number): void {
    this.state.remove(this.processingKeys.of(timeMs, namespace));
  }

  currentWatermark(): number {
    return this.manager.currentWatermark();
  }

  currentProcessingTime(): number {
    return this.manager.processingTime.now();
  }

  fireEventTimers(watermarkMs: number): void {
    const backend = this.manager.backend;
    for (let top = this.eventQueue.peek(); top !== undefined && top.timeMs <= watermarkMs; top = this.eventQueue.peek()) {
      this.eventQueue.pop();
      backend.setCurrentKey(top.key, top.keyGroup);
      const mk = top.stateKey;
      if (!this.state.contains(mk)) continue; // deleted, or a duplicate index entry
      this.state.remove(mk);
      const timestamps = this.manager.timestamps;
      timestamps.markTimed();
      timestamps.current = top.timeMs;
      this.triggerable.onEventTime(top.key, top.keyGroup, top.namespace, top.timeMs);
    }
  }

  private fireProcessingTimers(): void {
    this.wakeup = null;
    const now = this.manager.processingTime.now();
    const backend = this.manager.backend;
    for (let top = this.processingQueue.peek(); top !== undefined && top.timeMs <= now; top = this.processingQueue.peek()) {
      this.processingQueue.pop();
      backend.setCurrentKey(top.key, top.keyGroup);
      const mk = top.stateKey;
      if (!this.state.contains(mk)) continue;
      this.state.remove(mk);
      this.manager.timestamps.current = NO_TIMESTAMP;
      this.triggerable.onProcessingTime(top.key, top.keyGroup, top.namespace, top.timeMs);
    }
    this.scheduleWakeup();
  }

  /** One scheduled wake-up at the earliest pending processing-time timer. */
  private scheduleWakeup(): void {
    const top = this.processingQueue.peek();
    if (top === undefined) return;
    if (this.wakeup !== null) {
      if (this.wakeup.timeMs <= top.timeMs) return;
      this.wakeup.handle.cancel();
    }
    const handle = this.manager.processingTime.scheduleAt(top.timeMs, () => this.fireProcessingTimers());
    this.wakeup = { timeMs: top.timeMs, handle };
  }

  pendingCounts(): { eventTime: number; processingTime: number } {
    return { eventTime: this.eventQueue.size, processingTime: this.processingQueue.size };
  }

  dispose(): void {
    this.wakeup?.handle.cancel();
    this.wakeup = null;
  }
}
