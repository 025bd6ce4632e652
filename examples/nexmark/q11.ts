/**
 * Nexmark q11, user sessions: per bidder, sessions of bids at most 10 s apart (event-time session
 * windows with a 10 s gap) and how many bids each had; a session ends 10 s after its last bid.
 * Bids keyed by bidder are counted incrementally per session window (merging sessions merge their
 * counts), and the window's bounds are attached when it fires.
 * Run: npx tsx examples/nexmark/q11.ts [events] [parallelism]
 */
import { type AggregateFunction, type DataStream, EventTimeSessionWindows } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import type { Q11Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { bids } from './select.ts';

const GAP_MS = 10_000;

const COUNT: AggregateFunction<Bid, number, number> = {
  createAccumulator: () => 0,
  add: (_bid, n) => n + 1,
  getResult: (n) => n,
  merge: (a, b) => a + b,
};

/** Every bidder's sessions with their bid counts. */
export function q11(events: DataStream<NexmarkEvent>): DataStream<Q11Result> {
  return events
    .flatMap(bids)
    .name('q11-bids')
    .keyBy((b) => b.bidder)
    .window(EventTimeSessionWindows.withGap(GAP_MS))
    .aggregate<number, number, Q11Result>(COUNT, () => ({
      process(bidder, ctx, counts, out) {
        for (const bidCount of counts) out.collect({ bidder, bidCount, starttime: ctx.window.start, endtime: ctx.window.end });
      },
    }))
    .uid('q11-sessions')
    .name('q11-sessions');
}

if (isMain(import.meta.url)) await runQuery('q11', q11);
