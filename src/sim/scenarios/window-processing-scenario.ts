/**
 * The simulator's processing-time window scenario (`window-processing`): tumbling, sliding and
 * session windows in processing time, driven by the simulator's virtual clock, on one keyed input
 * from one source split (its parallelism and its tag stage's fixed at 1, so each key's records
 * reach the window operators in sequence order on one channel, and a rescale moves only the window
 * operators). Which window a record falls in depends on when it arrives, so the committed output
 * differs from the fault-free run's and is not compared with it; a hold-open source keeps the job
 * running until every record is counted in committed output (a bounded job's last open
 * processing-time windows never fire), and `checkProcessingWindows` then guarantees, per window
 * kind and key, on the committed output alone:
 * - every record of the key is counted in exactly 1 tumbling window, exactly `size / slide` = 3
 *   sliding windows and exactly 1 session window;
 * - each window holds a contiguous run of the key's sequence numbers (count, first, last and sum
 *   agree), so no record is missing from or repeated inside a window;
 * - a window's length is the tumbling size, the sliding size, or at least the session gap, and its
 *   start is aligned for tumbling and sliding windows;
 * - windows follow the records' order: tumbling and session windows of a key are disjoint in time
 *   and a later one holds later records; sliding windows' first and last records never go back;
 * - no line is committed twice (a window fires once: its timer fires once, the window is removed
 *   at its end, and a restore replays records only into restored state).
 * Under at-least-once the window operator has two inputs (the records and the hold-open source),
 * whose barriers it does not align, so records after one barrier can be in the snapshot and be
 * replayed into it again (the at-least-once contract): the checker then asks only that nothing is
 * lost: every record in at least that many windows, each window holding at least the run from its
 * first to its last record (count and sum no lower), a line committed twice counted once.
 * It does not guarantee which window a record lands in (that is the arrival time), nor that the
 * windows match the fault-free run's. Window contents, merging sets and processing-time timers are
 * keyed state: restores, savepoints and rescales carry open windows whose timers are then due.
 */
import type { DataStream } from '../../api/data-stream.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import {
  ProcessingTimeSessionWindows,
  SlidingProcessingTimeWindows,
  TumblingProcessingTimeWindows,
  type WindowAssigner,
} from '../../runtime/windows/assigners.ts';
import type { ProcessWindowFunction } from '../../runtime/windows/window-functions.ts';
import type { TimeWindow } from '../../runtime/windows/window.ts';
import { type Span, spanAggregate } from './window-span.ts';
import type { Guarantee } from '../checkers/exactly-once.ts';
import { HoldOpenSource } from './sim-sources.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';

export const PT_TUMBLING_MS = 20;
export const PT_SLIDING_MS: readonly [size: number, slide: number] = [30, 10];
export const PT_SESSION_GAP_MS = 4;

type Kind = 'T' | 'S' | 'X';
/** Windows each record belongs to, per kind. */
const COVER: Readonly<Record<Kind, number>> = { T: 1, S: PT_SLIDING_MS[0] / PT_SLIDING_MS[1], X: 1 };

function lines(kind: Kind): () => ProcessWindowFunction<Span, string, string, TimeWindow> {
  return () => ({
    process: (key, ctx, results, out) => {
      for (const [n, first, last, sum] of results) out.collect(`${kind}|${key}|${ctx.window.start}|${ctx.window.end}|${first}|${last}|${sum}|${n}`);
    },
  });
}

/** The input: one split, parallelism 1, no event time. */
export function processingSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number): DataStream<SeqRecord> {
  return env
    .generate({ count: spec.count, ratePerSec }, (i) => seqRecord(spec, i))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`)
    .setParallelism(1);
}

/**
 * Whether every record of every key is counted in at least its number of windows of each kind in
 * the `committed` lines (not just as many in sum: under at-least-once a record counted twice must
 * not make up for one not counted yet).
 */
export function processingDone(committed: readonly string[], expected: ReadonlyMap<string, number>): boolean {
  const byKindKey = groupWindows(committed);
  for (const kind of Object.keys(COVER) as Kind[]) {
    for (const [key, records] of expected) {
      const times = coverage(byKindKey.get(`${kind}|${key}`) ?? [], records);
      for (let seq = 1; seq <= records; seq++) if (times[seq]! < COVER[kind]) return false;
    }
  }
  return true;
}

/**
 * The hold-open source (`done`: every record counted in committed output), unioned into `input`,
 * then the three window stages; their lines in one stream: `kind|key|start|end|first|last|sum|n`.
 */
export function processingStages(env: StreamEnvironment, input: DataStream<SeqRecord>, done: () => boolean, uid: string): DataStream<string> {
  const hold = env.fromSource(new HoldOpenSource<SeqRecord>('hold-open', done)).uid('source-hold').setParallelism(1);
  const keyed = input.union(hold).keyBy((r) => r.key);
  const stage = (kind: Kind, assigner: WindowAssigner<SeqRecord, TimeWindow>, stageUid: string, name: string) =>
    keyed.window(assigner).aggregate(spanAggregate, lines(kind)).uid(stageUid).name(name);
  const tumbling = stage('T', TumblingProcessingTimeWindows.of(PT_TUMBLING_MS), uid, 'processing-tumbling');
  const sliding = stage('S', SlidingProcessingTimeWindows.of(PT_SLIDING_MS[0], PT_SLIDING_MS[1]), `${uid}-sliding`, 'processing-sliding');
  const sessions = stage('X', ProcessingTimeSessionWindows.withGap(PT_SESSION_GAP_MS), `${uid}-session`, 'processing-session');
  return tumbling.union(sliding, sessions);
}

/** The windows of the parsable lines, by `kind|key` (a line seen twice counted once). */
function groupWindows(lines: readonly string[]): Map<string, Line[]> {
  const out = new Map<string, Line[]>();
  for (const text of new Set(lines)) {
    const w = parse(text);
    if (w === null) continue;
    const id = `${w.kind}|${w.key}`;
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push(w);
  }
  return out;
}

/** How many of `windows` count each sequence number 1..records (index 0 unused): each window counts the run from its first to its last record. */
function coverage(windows: readonly Line[], records: number): Int32Array {
  const diff = new Int32Array(records + 2);
  for (const w of windows) {
    if (w.first < 1 || w.last > records || w.first > w.last) continue;
    diff[w.first]!++;
    diff[w.last + 1]!--;
  }
  const times = new Int32Array(records + 1);
  let running = 0;
  for (let seq = 1; seq <= records; seq++) times[seq] = running += diff[seq]!;
  return times;
}

interface Line {
  readonly kind: Kind;
  readonly key: string;
  readonly start: number;
  readonly end: number;
  readonly first: number;
  readonly last: number;
  readonly sum: number;
  readonly n: number;
}

function parse(text: string): Line | null {
  const f = text.split('|');
  if (f.length !== 8 || !(f[0]! in COVER)) return null;
  const [start, end, first, last, sum, n] = f.slice(2).map(Number) as [number, number, number, number, number, number];
  return { kind: f[0] as Kind, key: f[1]!, start, end, first, last, sum, n };
}

/** What is wrong with one window on its own: its records are not a contiguous run (at least one, at-least-once), or its shape is not its kind's. */
function windowProblem(w: Line, guarantee: Guarantee): string | null {
  const length = w.last - w.first + 1;
  const runSum = ((w.first + w.last) * length) / 2;
  const exact = guarantee === 'exactly-once';
  if (exact ? w.n !== length || w.sum !== runSum : w.n < length || w.sum < runSum)
    return `holds ${w.n} records summing to ${w.sum}, not the run ${w.first}..${w.last}`;
  const span = w.end - w.start;
  if (w.kind === 'T' && (span !== PT_TUMBLING_MS || w.start % PT_TUMBLING_MS !== 0)) return `is not an aligned ${PT_TUMBLING_MS} ms window`;
  if (w.kind === 'S' && (span !== PT_SLIDING_MS[0] || w.start % PT_SLIDING_MS[1] !== 0)) return `is not an aligned ${PT_SLIDING_MS[0]} ms window`;
  if (w.kind === 'X' && span < PT_SESSION_GAP_MS) return `is shorter than the ${PT_SESSION_GAP_MS} ms gap`;
  return null;
}

/** One key's windows of one kind: each record counted the right number of times (at least, at-least-once), windows in the records' order (exactly-once). */
function keyProblems(kind: Kind, key: string, windows: Line[], records: number, guarantee: Guarantee): string[] {
  const problems: string[] = [];
  for (const w of windows) {
    if (w.first < 1 || w.last > records)
      problems.push(`${kind} ${key}: window ${w.start}..${w.end} holds sequence numbers ${w.first}..${w.last}, the key has 1..${records}`);
  }
  const times = coverage(windows, records);
  for (let seq = 1; seq <= records && problems.length < 3; seq++) {
    const bad = guarantee === 'exactly-once' ? times[seq] !== COVER[kind] : times[seq]! < COVER[kind];
    if (bad) problems.push(`${kind} ${key}: record ${seq} is counted in ${times[seq]} windows, expected ${COVER[kind]}`);
  }
  if (guarantee === 'at-least-once') return problems;
  const sorted = [...windows].sort((a, b) => a.start - b.start || a.end - b.end);
  for (let i = 1; i < sorted.length && problems.length < 5; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    const disjoint = kind === 'S' || (a.end <= b.start && a.last < b.first);
    const ordered = a.first <= b.first && a.last <= b.last;
    if (!disjoint || !ordered)
      problems.push(
        `${kind} ${key}: window ${a.start}..${a.end} (${a.first}..${a.last}) and window ${b.start}..${b.end} (${b.first}..${b.last}) are out of order or overlap`,
      );
  }
  return problems;
}

/**
 * The processing-time checker (see the module comment): `committed` lines against `expected`
 * records per key. Returns what is wrong, empty when the output keeps the guarantee.
 */
export function checkProcessingWindows(committed: readonly unknown[], expected: ReadonlyMap<string, number>, guarantee: Guarantee): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const byKindKey = new Map<string, Line[]>();
  for (const item of committed) {
    const text = String(item);
    if (seen.has(text)) {
      if (guarantee === 'exactly-once') problems.push(`duplicate: '${text}' committed more than once`);
      continue;
    }
    seen.add(text);
    const w = parse(text);
    if (w === null) {
      problems.push(`unexpected line '${text}'`);
      continue;
    }
    const wrong = windowProblem(w, guarantee);
    if (wrong) problems.push(`${w.kind} ${w.key}: window ${w.start}..${w.end} ${wrong}`);
    if (!expected.has(w.key)) problems.push(`${w.kind}: key ${w.key} is not an input key`);
    const id = `${w.kind}|${w.key}`;
    let list = byKindKey.get(id);
    if (!list) byKindKey.set(id, (list = []));
    list.push(w);
  }
  for (const kind of Object.keys(COVER) as Kind[]) {
    for (const [key, records] of expected) {
      problems.push(...keyProblems(kind, key, byKindKey.get(`${kind}|${key}`) ?? [], records, guarantee));
      if (problems.length >= 20) return problems.slice(0, 20);
    }
  }
  return problems.slice(0, 20);
}
