/**
 * Nexmark q5, hot items: per sliding window of event time (10 s long, starting every 2 s), the
 * auctions with the most bids. Two windowed steps: bids keyed by auction are counted per sliding
 * window (an incremental count, with the window's start attached when it fires); the counts, whose
 * event time is their window's last millisecond, are keyed by window start and cut into 2-second
 * tumbling windows (each holds exactly one sliding window's counts), where the highest count wins.
 * Ties give several auctions. Run: npx tsx examples/nexmark/q5.ts [events] [parallelism]
 */
import { type AggregateFunction, type DataStream, SlidingEventTimeWindows, TumblingEventTimeWindows } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import type { Q5Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { bids } from './select.ts';

const SIZE_MS = 10_000;
const SLIDE_MS = 2_000;

const COUNT: AggregateFunction<Bid, number, number> = {
  createAccumulator: () => 0,
  add: (_bid, n) => n + 1,
  getResult: (n) => n,
  merge: (a, b) => a + b,
};

/** The auctions with the most bids in each sliding window. */
export function q5(events: DataStream<NexmarkEvent>): DataStream<Q5Result> {
  return events
    .flatMap(bids)
    .name('q5-bids')
    .keyBy((b) => b.auction)
    .window(SlidingEventTimeWindows.of(SIZE_MS, SLIDE_MS))
    .aggregate<number, number, Q5Result>(COUNT, () => ({
      process(auction, ctx, counts, out) {
        for (const num of counts) out.collect({ auction, num, starttime: ctx.window.start });
      },
    }))
    .uid('q5-counts')
    .name('q5-counts')
    .keyBy((c) => c.starttime)
    .window(TumblingEventTimeWindows.of(SLIDE_MS))
    .process<Q5Result>(() => ({
      process(_start, _ctx, counts, out) {
        let max = 0;
        for (const c of counts) if (c.num > max) max = c.num;
        for (const c of counts) if (c.num === max) out.collect(c);
      },
    }))
    .uid('q5-hottest')
    .name('q5-hottest');
}

if (isMain(import.meta.url)) await runQuery('q5', q5);
