/**
 * Nexmark q11, user sessions: per bidder, sessions of bids at most 10 s apart (session windows of
 * event time with a 10 s gap), and how many bids each had. Bids keyed by bidder go to a keyed
 * function that keeps the bidder's open sessions (start, last bid, count); a bid joins, or merges,
 * the sessions whose [start, last + gap] it falls in or touches, and an event-time timer at a
 * session's end (last bid + gap, minus 1 ms) emits it once the watermark has passed.
 * Run: npx tsx examples/nexmark/timers/q11.ts [events] [parallelism]
 */
import { type DataStream, type KeyedProcessFunction, type TimerService, type ValueState, ValueStateDescriptor } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import type { Q11Result } from '../results.ts';
import { isMain, runQuery } from '../run-query.ts';
import { bids } from '../select.ts';

const GAP_MS = 10_000;

/** An open session: first and last bid time, number of bids. */
type Session = [start: number, last: number, count: number];

function sessions(): KeyedProcessFunction<number, Bid, Q11Result> {
  let open: ValueState<Session[]>;
  const add = (sessions: readonly Session[], t: number, timers: TimerService): Session[] => {
    let merged: Session = [t, t, 1];
    const kept: Session[] = [];
    for (const s of sessions) {
      // Windows [start, last + gap) and [t, t + gap) merge when they overlap or touch.
      if (t <= s[1] + GAP_MS && t + GAP_MS >= s[0]) {
        timers.deleteEventTimeTimer(s[1] + GAP_MS - 1);
        merged = [Math.min(merged[0], s[0]), Math.max(merged[1], s[1]), merged[2] + s[2]];
      } else kept.push(s);
    }
    timers.registerEventTimeTimer(merged[1] + GAP_MS - 1);
    kept.push(merged);
    return kept;
  };
  return {
    open(ctx) {
      open = ctx.getState(new ValueStateDescriptor<Session[]>('sessions'));
    },
    processElement(bid, ctx, _out) {
      open.update(add(open.value() ?? [], bid.dateTime, ctx.timerService()));
    },
    onTimer(timestampMs, ctx, out) {
      const remaining: Session[] = [];
      for (const s of open.value() ?? []) {
        if (s[1] + GAP_MS - 1 === timestampMs) out.collect({ bidder: ctx.currentKey, bidCount: s[2], starttime: s[0], endtime: s[1] + GAP_MS });
        else remaining.push(s);
      }
      if (remaining.length === 0) open.clear();
      else open.update(remaining);
    },
  };
}

/** Every bidder's sessions with their bid counts. */
export function q11(events: DataStream<NexmarkEvent>): DataStream<Q11Result> {
  return events
    .flatMap(bids)
    .name('q11-bids')
    .keyBy((b) => b.bidder)
    .process(sessions)
    .uid('q11-sessions')
    .name('q11-sessions');
}

if (isMain(import.meta.url)) await runQuery('q11', q11);
