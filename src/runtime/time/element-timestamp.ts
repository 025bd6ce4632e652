/**
 * The event time of the element a subtask's chain is processing: one mutable register per
 * subtask, so records carry their timestamps through a chain without an allocation each.
 *
 * A register starts *untimed*: no record of the subtask has had an event time, `current` is
 * NO_TIMESTAMP and stays so, and the per-record paths (the task's buffer loop, a source's
 * collector, the record writers) neither reset nor read it. Whatever gives records event time
 * calls `markTimed()` first — a watermark strategy or timestamp assigner when it opens, window
 * and interval-join operators when they open, an event-time timer when it fires, the task when a
 * timestamped buffer arrives — and from then on the subtask handles the register per record.
 * Jobs without event time so skip ~110 JIT instructions per record (BENCHMARKS.md, weir_vs_loop).
 *
 * Invariant: while `timed` is false, `current` is NO_TIMESTAMP. Writing anything else into
 * `current` without calling `markTimed()` first is a programmer error: the writers downstream
 * would drop the timestamp.
 */
import { assert } from '../../core/assert.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';

export class ElementTimestamp {
  /** Event time in milliseconds of the element in flight, or NO_TIMESTAMP (-Infinity). */
  current = NO_TIMESTAMP;
  private isTimed = false;
  private listeners: Array<() => void> = [];

  /** Whether any record of this subtask may carry event time (one-way: never untimed again). */
  get timed(): boolean {
    return this.isTimed;
  }

  /** Records of this subtask may carry event time from now on: switches the per-record paths once. */
  markTimed(): void {
    if (this.isTimed) return;
    assert(this.current === NO_TIMESTAMP, 'event-time register written before markTimed()');
    this.isTimed = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  /** Calls `listener` once the register is timed: now if it already is. */
  onTimed(listener: () => void): void {
    if (this.isTimed) listener();
    else this.listeners.push(listener);
  }
}

export function newElementTimestamp(): ElementTimestamp {
  return new ElementTimestamp();
}
