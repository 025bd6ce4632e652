/**
 * The bounded queue between the CDC reader's intake (the copy, the replication stream) and its
 * `fetch`. When it holds `capacity` entries it reports full once (the reader stops reading the
 * replication socket) and the copy waits for room; once `fetch` drained it to half, it reports room
 * again. An empty queue lets `fetch` wait for the next entry.
 */
export class ChangeQueue<E> {
  private items: Array<E | undefined> = [];
  private head = 0;
  private full = false;
  private waiter: (() => void) | null = null;
  private dataWaiter: (() => void) | null = null;

  constructor(
    /** Entries held before the queue reports full. */
    readonly capacity: number,
    private readonly onFull: () => void,
    private readonly onRoom: () => void,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  push(entry: E): void {
    this.items.push(entry);
    if (this.dataWaiter !== null) this.wake();
    if (!this.full && this.size >= this.capacity) {
      this.full = true;
      this.onFull();
    }
  }

  /** Resolves once the queue holds an entry, or `wake` is called (a failure, the reader closing). */
  nonEmpty(): Promise<void> | void {
    if (this.size > 0) return;
    return new Promise((resolve) => {
      this.dataWaiter = resolve;
    });
  }

  /** Lets a waiting `nonEmpty` return (it may find the queue still empty). */
  wake(): void {
    const waiter = this.dataWaiter;
    this.dataWaiter = null;
    waiter?.();
  }

  /** The oldest entry, or undefined when empty. */
  peek(): E | undefined {
    return this.items[this.head];
  }

  /** Drops the oldest entry (after `peek`). */
  drop(): void {
    this.items[this.head++] = undefined;
  }

  /** Resolves once the queue has room (the copy awaits it between fetches). */
  space(): Promise<void> | void {
    if (this.size < this.capacity) return;
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** After `fetch` drained: frees the consumed head now and then, and reports room once half is free. */
  settle(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (this.size > this.capacity / 2) return;
    if (this.full) {
      this.full = false;
      this.onRoom();
    }
    this.release();
  }

  /** Empties the queue and lets a waiting copy and fetch go on (they stop by themselves: the reader closed). */
  clear(): void {
    this.items = [];
    this.head = 0;
    this.release();
    this.wake();
  }

  private release(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
