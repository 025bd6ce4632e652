/**
 * The expected output of the tumbling and sliding window scenarios, computed from the generated
 * input alone (not by running the engine): which windows fire, how often, with what sum, and which
 * records are late, as the event-time rules say (Flink's): the watermark at record i is the highest
 * the source emitted before it (`windowWatermark`); a window fires once the watermark reaches its
 * last millisecond and again for each element that joins it later; it is dropped once the watermark
 * reaches its last millisecond plus the allowed lateness, after which its elements are skipped; a
 * record skipped by every window and itself older than the watermark minus the allowed lateness
 * goes to the late output; the end of input fires every window still waiting. A fault-free run
 * carries the same engine bugs as the faulty one, so this, not the oracle, is what the window
 * scenarios' output is compared with (scenarios.ts).
 */
import { seqRecord, type SeqSourceSpec } from '../scenarios/sequence-source.ts';
import { WINDOW_LATENESS_MS, windowEventTime, windowWatermark } from '../scenarios/window-scenarios.ts';

/** Window size and slide of the reference's window kinds (window-scenarios.ts builds the same). */
export const REFERENCE_WINDOWS = { 'window-tumbling': [100, 100], 'window-sliding': [300, 100] } as const;
export type ReferenceKind = keyof typeof REFERENCE_WINDOWS;

interface OpenWindow {
  readonly start: number;
  readonly end: number;
  sum: number;
  n: number;
  /** Its event-time timer at the last millisecond is registered and has not fired. */
  waiting: boolean;
}

/** Starts of the windows holding `ts`, newest first (floor division: negative times too). */
function startsOf(ts: number, size: number, slide: number): number[] {
  const out: number[] = [];
  for (let s = Math.floor(ts / slide) * slide; s > ts - size; s -= slide) out.push(s);
  return out;
}

/** Every committed line the scenario must produce: window firings `W|key|start|end|sum|n` and late records `L|key|seq`. */
export function referenceWindowLines(kind: ReferenceKind, spec: SeqSourceSpec): string[] {
  const [size, slide] = REFERENCE_WINDOWS[kind];
  const lines: string[] = [];
  const open = new Map<string, Map<number, OpenWindow>>(); // key -> start -> window
  const fire = (key: string, w: OpenWindow) => lines.push(`W|${key}|${w.start}|${w.end}|${w.sum}|${w.n}`);
  const advance = (watermark: number) => {
    for (const [key, windows] of open) {
      for (const [start, w] of windows) {
        if (w.waiting && w.end - 1 <= watermark) {
          w.waiting = false;
          fire(key, w);
        }
        if (w.end - 1 + WINDOW_LATENESS_MS <= watermark) windows.delete(start);
      }
    }
  };
  let watermark = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < spec.count; i++) {
    const { key, seq } = seqRecord(spec, i);
    const ts = windowEventTime(i);
    let windows = open.get(key);
    if (windows === undefined) open.set(key, (windows = new Map()));
    let skipped = true;
    for (const start of startsOf(ts, size, slide)) {
      const end = start + size;
      if (end - 1 + WINDOW_LATENESS_MS <= watermark) continue;
      skipped = false;
      let w = windows.get(start);
      if (w === undefined) windows.set(start, (w = { start, end, sum: 0, n: 0, waiting: false }));
      w.sum += seq;
      w.n++;
      if (end - 1 <= watermark) fire(key, w);
      else w.waiting = true;
    }
    if (skipped && ts + WINDOW_LATENESS_MS <= watermark) lines.push(`L|${key}|${seq}`);
    const next = windowWatermark(i);
    if (next > watermark) {
      watermark = next;
      advance(watermark);
    }
  }
  advance(Number.POSITIVE_INFINITY);
  return lines;
}
