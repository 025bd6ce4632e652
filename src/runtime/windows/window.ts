/**
 * Windows: a time window `[start, end)` or the one global window. Window state and timers are keyed
 * by a window's namespace string (`namespaceOf`), which `windowOfNamespace` reads back.
 */
import { assert } from '../../core/assert.ts';

/** A window of event or processing time: `[start, end)` in milliseconds. */
export class TimeWindow {
  /** The window's kind. */
  readonly kind = 'time' as const;
  /** @internal `namespaceOf` computed once per window object. */
  ns: string | undefined = undefined;
  /**
   * A window.
   * @param start first millisecond in the window (inclusive).
   * @param end first millisecond after the window (exclusive).
   */
  constructor(
    readonly start: number,
    readonly end: number,
  ) {}

  /** The last millisecond in the window (`end - 1`): its results carry this timestamp. */
  maxTimestamp(): number {
    return this.end - 1;
  }

  /** Whether this window and `other` overlap or touch (session windows merge then). */
  intersects(other: TimeWindow): boolean {
    return this.start <= other.end && this.end >= other.start;
  }

  /** The smallest window covering this one and `other` (one of them when it covers the other). */
  cover(other: TimeWindow): TimeWindow {
    if (this.start <= other.start && this.end >= other.end) return this;
    if (other.start <= this.start && other.end >= this.end) return other;
    return new TimeWindow(Math.min(this.start, other.start), Math.max(this.end, other.end));
  }

  /** Whether `other` is the same window. */
  equals(other: Window): boolean {
    return other.kind === 'time' && other.start === this.start && other.end === this.end;
  }

  /** The window as `[start, end)` or `global`. */
  toString(): string {
    return `[${this.start}, ${this.end})`;
  }
}

/** The single window of `GlobalWindows`: it never ends, so only a trigger makes it fire. */
export class GlobalWindow {
  /** The window's kind. */
  readonly kind = 'global' as const;
  /** The one global window. */
  static readonly INSTANCE = new GlobalWindow();
  private constructor() {}

  /** The global window never closes. */
  maxTimestamp(): number {
    return Number.MAX_SAFE_INTEGER;
  }

  /** Whether `other` is the global window. */
  equals(other: Window): boolean {
    return other.kind === 'global';
  }

  /** The window as `[start, end)` or `global`. */
  toString(): string {
    return 'global';
  }
}

/** Any window. */
export type Window = TimeWindow | GlobalWindow;

/** The window's key in window state and timers: `start:end`, or `g` for the global window. */
export function namespaceOf(window: Window): string {
  if (window.kind === 'global') return 'g';
  if (window.ns === undefined) window.ns = `${window.start}:${window.end}`;
  return window.ns;
}

/** The window a namespace names (the inverse of `namespaceOf`). */
export function windowOfNamespace(namespace: string): Window {
  if (namespace === 'g') return GlobalWindow.INSTANCE;
  const colon = namespace.indexOf(':');
  assert(colon > 0, () => `not a window namespace: '${namespace}'`);
  const start = Number(namespace.slice(0, colon));
  const end = Number(namespace.slice(colon + 1));
  assert(Number.isFinite(start) && Number.isFinite(end) && start < end, () => `not a window namespace: '${namespace}'`);
  const window = new TimeWindow(start, end);
  window.ns = namespace; // the string is at hand, and state maps may have its hash already
  return window;
}

/**
 * The start of the window of size `sizeMs` (shifted by `offsetMs`) that contains `timestampMs`:
 * windows are aligned to the epoch, e.g. hourly windows start on the hour.
 */
export function windowStart(timestampMs: number, offsetMs: number, sizeMs: number): number {
  const remainder = (timestampMs - offsetMs) % sizeMs;
  // JavaScript's % keeps the sign of the dividend: step back one size for negative remainders.
  return remainder < 0 ? timestampMs - (remainder + sizeMs) : timestampMs - remainder;
}

/**
 * Merges overlapping or touching time windows (sessions): each group of two or more windows that
 * merge gives its cover and its members. Windows that merge with nothing are not listed.
 */
export function mergeTimeWindows(windows: readonly TimeWindow[]): Array<{ readonly result: TimeWindow; readonly merged: readonly TimeWindow[] }> {
  if (windows.length === 2) {
    // A key's one open session and the new element's window: the common case, without the sort.
    let a = windows[0]!;
    let b = windows[1]!;
    if (!a.intersects(b)) return [];
    if (b.start < a.start || (b.start === a.start && b.end < a.end)) [a, b] = [b, a];
    return [{ result: a.cover(b), merged: [a, b] }];
  }
  if (windows.length < 2) return [];
  const sorted = [...windows].sort((a, b) => a.start - b.start || a.end - b.end);
  const groups: Array<{ result: TimeWindow; merged: TimeWindow[] }> = [];
  let current: { result: TimeWindow; merged: TimeWindow[] } | null = null;
  for (const w of sorted) {
    if (current?.result.intersects(w)) {
      current.result = current.result.cover(w);
      current.merged.push(w);
    } else {
      if (current) groups.push(current);
      current = { result: w, merged: [w] };
    }
  }
  if (current) groups.push(current);
  return groups.filter((g) => g.merged.length > 1);
}
