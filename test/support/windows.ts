/**
 * Inputs and plain TypeScript reference computations for the window tests: events with keys,
 * out-of-order timestamps and values, a punctuated watermark strategy (a watermark after every
 * event, so which events are late is the same on every run), and what each window kind must emit.
 */
import { WatermarkStrategy } from '../../src/index.ts';

export interface Ev {
  readonly k: string;
  readonly ts: number;
  readonly v: number;
}

/** `count` events over `keys` keys, event i at about i * stepMs, shuffled by up to `disorderMs`. */
export function events(count: number, keys: number, stepMs: number, disorderMs: number, seed = 1): Ev[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s * 1_103_515_245 + 12_345) >>> 0;
    return s / 4_294_967_296;
  };
  return Array.from({ length: count }, (_, i) => ({
    k: `k${(i * 7) % keys}`,
    ts: Math.max(0, i * stepMs + Math.floor((rand() * 2 - 1) * disorderMs)),
    v: (i * 31) % 97,
  }));
}

/** After each event, the watermark `max timestamp so far - boundMs` (so lateness is deterministic). */
export function punctuated(boundMs: number): WatermarkStrategy<Ev> {
  return WatermarkStrategy.forGenerator<Ev>(() => {
    let max = Number.NEGATIVE_INFINITY;
    return {
      onEvent(_e, ts, out) {
        if (ts > max) max = ts;
        out.emitWatermark(max - boundMs);
      },
      onPeriodicEmit() {},
    };
  }).withTimestampAssigner((e) => e.ts);
}

/** Timestamps only: the one watermark is the maximum at end of input, so every window fires once, at the end. */
export function atEndOnly(): WatermarkStrategy<Ev> {
  return WatermarkStrategy.forGenerator<Ev>(() => ({ onEvent() {}, onPeriodicEmit() {} })).withTimestampAssigner((e) => e.ts);
}

export interface Firing<R> {
  readonly k: string;
  readonly start: number;
  readonly end: number;
  readonly value: R;
}

/**
 * What event-time windows with the default trigger emit for `evs` in arrival order, with the
 * watermark `max ts - boundMs` after each event (null: only at the end): one firing per window when
 * the watermark passes its end, one more per late element within `latenessMs`, and the elements
 * too late for every window.
 */
export function referenceWindows<R>(
  evs: readonly Ev[],
  assign: (ts: number) => Array<[number, number]>,
  boundMs: number | null,
  latenessMs: number,
  evaluate: (values: number[]) => R,
): { firings: Firing<R>[]; late: Ev[] } {
  let wm = Number.NEGATIVE_INFINITY;
  const open = new Map<string, { k: string; start: number; end: number; values: number[]; fired: boolean }>();
  const firings: Firing<R>[] = [];
  const late: Ev[] = [];
  const fire = (w: { k: string; start: number; end: number; values: number[] }) =>
    firings.push({ k: w.k, start: w.start, end: w.end, value: evaluate([...w.values]) });
  const advance = (to: number) => {
    if (to <= wm) return;
    wm = to;
    for (const [id, w] of open) {
      if (!w.fired && w.end - 1 <= wm) {
        fire(w);
        w.fired = true;
      }
      if (w.end - 1 + latenessMs <= wm) open.delete(id);
    }
  };
  let max = Number.NEGATIVE_INFINITY;
  for (const e of evs) {
    let skipped = true;
    for (const [start, end] of assign(e.ts)) {
      if (end - 1 + latenessMs <= wm) continue;
      skipped = false;
      const id = `${e.k}|${start}|${end}`;
      let w = open.get(id);
      if (!w) open.set(id, (w = { k: e.k, start, end, values: [], fired: false }));
      w.values.push(e.v);
      if (end - 1 <= wm) {
        fire(w);
        w.fired = true;
      }
    }
    if (skipped && e.ts + latenessMs <= wm) late.push(e);
    max = Math.max(max, e.ts);
    if (boundMs !== null) advance(max - boundMs);
  }
  advance(Number.POSITIVE_INFINITY);
  return { firings, late };
}

export const tumbling =
  (size: number) =>
  (ts: number): Array<[number, number]> => {
    const start = ts - (ts % size);
    return [[start, start + size]];
  };

export const sliding =
  (size: number, slide: number) =>
  (ts: number): Array<[number, number]> => {
    const out: Array<[number, number]> = [];
    for (let start = ts - (ts % slide); start > ts - size; start -= slide) out.push([start, start + size]);
    return out;
  };

/** Sessions per key over all events (they all fire at the end): `[first ts, last ts + gap)` with their values. */
export function referenceSessions(evs: readonly Ev[], gapMs: number): Array<{ k: string; start: number; end: number; values: number[] }> {
  const byKey = new Map<string, Ev[]>();
  for (const e of evs) byKey.set(e.k, [...(byKey.get(e.k) ?? []), e]);
  const out: Array<{ k: string; start: number; end: number; values: number[] }> = [];
  for (const [k, list] of byKey) {
    const sorted = [...list].sort((a, b) => a.ts - b.ts);
    let cur: { k: string; start: number; end: number; values: number[] } | null = null;
    for (const e of sorted) {
      if (cur && e.ts <= cur.end) {
        cur.end = Math.max(cur.end, e.ts + gapMs);
        cur.values.push(e.v);
      } else {
        if (cur) out.push(cur);
        cur = { k, start: e.ts, end: e.ts + gapMs, values: [e.v] };
      }
    }
    if (cur) out.push(cur);
  }
  return out;
}

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** A canonical string per firing, for comparing multisets. */
export const line = (f: { k: string; start: number; end: number; value: unknown }): string => `${f.k}|${f.start}|${f.end}|${JSON.stringify(f.value)}`;
