import { describe, expect, it } from 'vitest';
import { type KeyGroup, keyGroup } from '../../../src/core/ids.ts';
import { SeededRandom } from '../../../src/core/time.ts';
import { newElementTimestamp } from '../../../src/runtime/time/element-timestamp.ts';
import { KeyedTimeServiceManager, TIMER_STATE_PREFIX } from '../../../src/runtime/time/keyed-timer-service.ts';
import type { Triggerable } from '../../../src/runtime/time/timer-service.ts';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup, type Key } from '../../../src/state/key-groups.ts';
import { ManualEnvironment } from '../../support/manual-env.ts';

const MAX_PARALLELISM = 128;
const SERVICE = 'test-timers';

/** Event time only: processing time stands still (the test never advances it), so nothing scheduled runs. */
const noProcessingTime = new ManualEnvironment();

function recorder(fired: string[]): Triggerable {
  return {
    onEventTime: (key: Key, _kg: KeyGroup, namespace: string, timeMs: number) => void fired.push(`${timeMs}|${String(key)}|${namespace}`),
    onProcessingTime: () => {
      throw new Error('no processing-time timers here');
    },
  };
}

describe('keyed timer service', () => {
  it('fires each (key, namespace, time) once in time order, with more namespaces than its key memo holds and up to three times per namespace; the state keeps `e<time>|<namespace>` keys and a new service restores them', () => {
    const r = new SeededRandom(12);
    const backend = new HeapKeyedStateBackend({
      uid: 'op',
      subtask: 0,
      keyGroupRange: { start: 0, end: MAX_PARALLELISM - 1 },
      maxParallelism: MAX_PARALLELISM,
    });
    const fired: string[] = [];
    const manager = new KeyedTimeServiceManager(backend, noProcessingTime, newElementTimestamp());
    const timers = manager.getInternalTimerService(SERVICE, recorder(fired));
    // Reference: the pending timers as `time|key|namespace`.
    const pending = new Map<string, { timeMs: number; key: string; namespace: string }>();
    const setKey = (key: string) => backend.setCurrentKey(key, keyGroup(assignToKeyGroup(key, MAX_PARALLELISM)));
    // 6,000 namespaces (past the memo's 4,096), each with a timer at its end and one 100 ms later
    // (a window's trigger and cleanup timers with allowed lateness) and sometimes a third time
    // (more than the memo keeps per namespace), registered for several keys.
    for (let i = 0; i < 20_000; i++) {
      const n = r.int(6_000);
      const namespace = `${n * 1_000}:${n * 1_000 + 5_000}`;
      const u = r.next();
      const timeMs = n * 1_000 + 4_999 + (u < 0.45 ? 0 : u < 0.9 ? 100 : 37);
      const key = `k${r.int(30)}`;
      setKey(key);
      const id = `${timeMs}|${key}|${namespace}`;
      if (r.next() < 0.2) {
        timers.deleteEventTimeTimer(namespace, timeMs);
        pending.delete(id);
      } else {
        timers.registerEventTimeTimer(namespace, timeMs);
        pending.set(id, { timeMs, key, namespace });
      }
    }
    const stored = backend
      .entries(TIMER_STATE_PREFIX + SERVICE)
      .flatMap(([key, map]) => [...(map as Map<string, number>).keys()].map((mk) => `${String(key)}/${mk}`))
      .sort();
    expect(stored).toEqual([...pending.values()].map((t) => `${t.key}/e${t.timeMs}|${t.namespace}`).sort());

    // A second manager over the same state (as after a restore) fires the timers at or below its
    // watermark, from the keys it read back; the first then finds those gone and fires the rest.
    const firedAfterRestore: string[] = [];
    const restored = new KeyedTimeServiceManager(backend, noProcessingTime, newElementTimestamp());
    restored.getInternalTimerService(SERVICE, recorder(firedAfterRestore));
    restored.advanceWatermark(3_000_000);
    for (const wm of [1_000_000, 3_000_000, 4_500_000, 7_000_000]) manager.advanceWatermark(wm);

    const timeOf = (id: string) => Number(id.slice(0, id.indexOf('|')));
    const expected = [...pending.values()].map((t) => `${t.timeMs}|${t.key}|${t.namespace}`).sort();
    expect(firedAfterRestore.length).toBeGreaterThan(1_000);
    expect(fired.length).toBeGreaterThan(1_000);
    expect([...firedAfterRestore].sort()).toEqual(expected.filter((id) => timeOf(id) <= 3_000_000));
    expect([...fired].sort()).toEqual(expected.filter((id) => timeOf(id) > 3_000_000));
    for (const order of [firedAfterRestore, fired]) {
      const times = order.map(timeOf);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
    expect(backend.entries(TIMER_STATE_PREFIX + SERVICE)).toEqual([]);
  });
});
