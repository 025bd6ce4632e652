/**
 * A binary min-heap of pending timers: the index over a timer service's keyed state. Ties in time
 * are broken by key group, key and namespace, so timers fire in the same order after any restore.
 */
import type { KeyGroup } from '../../core/ids.ts';
import type { Key } from '../../state/key-groups.ts';

export interface TimerEntry {
  readonly timeMs: number;
  readonly key: Key;
  readonly keyGroup: KeyGroup;
  readonly namespace: string;
}

function compareKeys(a: Key, b: Key): number {
  if (typeof a === typeof b && (typeof a === 'number' || typeof a === 'string' || typeof a === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  const sa = `${typeof a}:${String(a)}`;
  const sb = `${typeof b}:${String(b)}`;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export function compareTimers(a: TimerEntry, b: TimerEntry): number {
  if (a.timeMs !== b.timeMs) return a.timeMs < b.timeMs ? -1 : 1;
  if (a.keyGroup !== b.keyGroup) return a.keyGroup - b.keyGroup;
  const k = compareKeys(a.key, b.key);
  if (k !== 0) return k;
  return a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0;
}

/** A min-heap of timers; `E` lets a timer service keep more per entry (its state key). */
export class TimerQueue<E extends TimerEntry = TimerEntry> {
  private readonly heap: E[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): E | undefined {
    return this.heap[0];
  }

  push(entry: E): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareTimers(h[parent]!, entry) <= 0) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = entry;
  }

  pop(): E | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    const n = h.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && compareTimers(h[r]!, h[l]!) < 0 ? r : l;
      if (compareTimers(h[child]!, last) >= 0) break;
      h[i] = h[child]!;
      i = child;
    }
    h[i] = last;
    return top;
  }

  clear(): void {
    this.heap.length = 0;
  }
}
