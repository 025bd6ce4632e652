/**
 * The bounded queue between the CDC reader's intake (the copy, the replication stream) and `poll`.
 * When it holds `capacity` entries it reports full once (the reader stops reading the replication
 * socket) and the copy waits for room; once `poll` drained it to half, it reports room again.
 */
export class ChangeQueue<E> {
  private items: Array<E | undefined> = [];
  private head = 0;
  private full = false;
  private waiter: (() => void) | null = null;

  constructor(
    private readonly capacity: number,
    private readonly onFull: () => void,
    private readonly onRoom: () => void,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  push(entry: E): void {
    this.items.push(entry);
    if (!this.full && this.size >= this.capacity) {
      this.full = true;
      this.onFull();
    }
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

  /** After `poll` drained: frees the consumed head now and then, and reports room once half is free. */
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

  /** Empties the queue and lets a waiting copy go on (it stops by itself: the reader closed). */
  clear(): void {
    this.items = [];
    this.head = 0;
    this.release();
  }

  private release(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
