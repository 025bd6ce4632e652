/**
 * The job of the window savepoint fixture (test/fixtures/savepoints/windows-0.1): session windows
 * (merging-window sets) and sliding windows (five windows per element), both aggregating, with
 * their contents, merging sets and timers in keyed state. `test/fixtures/savepoints/make-windows.ts`
 * wrote the fixture with the code of that time; `test/e2e/window-savepoint-compat.test.ts` restores
 * it with today's code. Keep the job, its uids and its input unchanged, or the fixture means nothing.
 */
import { type CollectSink, EventTimeSessionWindows, SlidingEventTimeWindows, StreamEnvironment, type StreamEnvironmentOptions } from '../../src/index.ts';
import { type Hold, heldGenerate } from './held-source.ts';
import { type Ev, events, line, punctuated, referenceSessions, referenceWindows, sliding, sum } from './windows.ts';

export const FIXTURE_EVENTS: readonly Ev[] = events(3_000, 5, 10, 40, 3);
export const SESSION_GAP_MS = 40;
export const SLIDING_SIZE_MS = 200;
export const SLIDING_SLIDE_MS = 50;
/** Where the source stopped when the fixture's savepoint was taken. */
export const FIXTURE_SAVEPOINT_AT = 1_500;

const SUM = { createAccumulator: () => 0, add: (e: Ev, a: number) => a + e.v, getResult: (a: number) => a, merge: (a: number, b: number) => a + b };

export function windowSavepointJob(options: StreamEnvironmentOptions, hold: Hold, sink: CollectSink<string>): StreamEnvironment {
  const env = StreamEnvironment.create(options);
  const input = heldGenerate(env, { count: FIXTURE_EVENTS.length }, (i) => FIXTURE_EVENTS[i]!, hold)
    .setParallelism(1)
    .uid('src')
    .assignTimestampsAndWatermarks(punctuated(60))
    .setParallelism(1)
    .uid('wm');
  const sessions = input
    .keyBy((e) => e.k)
    .window(EventTimeSessionWindows.withGap(SESSION_GAP_MS))
    .aggregate<number, number, string>(SUM, () => ({
      process: (k, ctx, sums, out) => out.collect(`s|${line({ k, start: ctx.window.start, end: ctx.window.end, value: sums[0] })}`),
    }))
    .uid('sessions');
  const slidingSums = input
    .keyBy((e) => e.k)
    .window(SlidingEventTimeWindows.of(SLIDING_SIZE_MS, SLIDING_SLIDE_MS))
    .aggregate<number, number, string>(SUM, () => ({
      process: (k, ctx, sums, out) => out.collect(`w|${line({ k, start: ctx.window.start, end: ctx.window.end, value: sums[0] })}`),
    }))
    .uid('sliding');
  sessions.union(slidingSums).sinkTo(sink).uid('sink');
  return env;
}

/** Every line the job emits over the whole input, by the reference computations. */
export function windowSavepointJobReference(): string[] {
  const sessions = referenceSessions(FIXTURE_EVENTS, SESSION_GAP_MS).map((s) => `s|${line({ ...s, value: sum(s.values) })}`);
  const windows = referenceWindows(FIXTURE_EVENTS, sliding(SLIDING_SIZE_MS, SLIDING_SLIDE_MS), 60, 0, sum).firings.map((f) => `w|${line(f)}`);
  return [...sessions, ...windows].sort();
}
