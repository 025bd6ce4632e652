/**
 * The timer index of one timer service and domain: a min-heap of timers per key group, and a heap
 * of the key groups ordered by their earliest timer (as Flink's KeyGroupPartitionedPriorityQueue),
 * so the earliest timer of the subtask is found in O(log groups) and each key group's timers stay
 * together, as their keyed state does.
 */
import { compareTimers, TimerQueue, type TimerEntry } from './timer-queue.ts';

/** The timer index of one service and domain, partitioned by key group. */
export class KeyGroupedTimerQueue<E extends TimerEntry = TimerEntry> {
  private readonly groups = new Map<number, TimerQueue<E>>();
  /** Key groups with at least one timer, as a heap by their head timer. */
  private readonly order: number[] = [];
  /** Index of each key group in `order`. */
  private readonly position = new Map<number, number>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Key groups holding timers (tests). */
  get keyGroups(): number {
    return this.order.length;
  }

  peek(): E | undefined {
    const g = this.order[0];
    return g === undefined ? undefined : this.groups.get(g)!.peek();
  }

  push(entry: E): void {
    const g = entry.keyGroup as number;
    let queue = this.groups.get(g);
    if (!queue) this.groups.set(g, (queue = new TimerQueue<E>()));
    queue.push(entry);
    this.count++;
    const at = this.position.get(g);
    if (at === undefined) {
      this.order.push(g);
      this.position.set(g, this.order.length - 1);
      this.siftUp(this.order.length - 1);
    } else {
      this.siftUp(at); // the group's head can only have become earlier
    }
  }

  pop(): E | undefined {
    const g = this.order[0];
    if (g === undefined) return undefined;
    const queue = this.groups.get(g)!;
    const top = queue.pop();
    this.count--;
    if (queue.size === 0) {
      this.groups.delete(g);
      this.removeTop();
    } else {
      this.siftDown(0);
    }
    return top;
  }

  private head(i: number): TimerEntry {
    return this.groups.get(this.order[i]!)!.peek()!;
  }

  private removeTop(): void {
    const first = this.order[0]!;
    const last = this.order.pop()!;
    this.position.delete(first);
    if (this.order.length === 0) return;
    this.order[0] = last;
    this.position.set(last, 0);
    this.siftDown(0);
  }

  private swap(i: number, j: number): void {
    const a = this.order[i]!;
    const b = this.order[j]!;
    this.order[i] = b;
    this.order[j] = a;
    this.position.set(b, i);
    this.position.set(a, j);
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareTimers(this.head(parent), this.head(i)) <= 0) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.order.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const child = r < n && compareTimers(this.head(r), this.head(l)) < 0 ? r : l;
      if (compareTimers(this.head(child), this.head(i)) >= 0) return;
      this.swap(i, child);
      i = child;
    }
  }
}
