/**
 * Nexmark q7, highest bid: per tumbling 10-second window of event time, the bids with the highest
 * price. Two windowed steps, as Beam's combiner does it: bids keyed by auction keep, per window,
 * the auction's highest bids (an incremental aggregate: one accumulator per auction and window);
 * those, whose event time is their window's last millisecond, are keyed by window and cut into the
 * same tumbling windows, where the highest of them win. Ties give several bids.
 * Run: npx tsx examples/nexmark/q7.ts [events] [parallelism]
 */
import { type AggregateFunction, type DataStream, type ProcessWindowFunction, TumblingEventTimeWindows } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import { windowStart } from './event-time.ts';
import type { Q7Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { bids } from './select.ts';

const WINDOW_MS = 10_000;

/** The bids with the highest price seen (all at that price). */
function highest<T extends { readonly price: number }>(): AggregateFunction<T, readonly T[], readonly T[]> {
  return {
    createAccumulator: () => [],
    add(value, acc) {
      const top = acc[0]?.price ?? -1;
      if (value.price < top) return acc;
      return value.price > top ? [value] : [...acc, value];
    },
    getResult: (acc) => acc,
    merge: (a, b) => b.reduce((acc, v) => highest<T>().add(v, acc), a),
  };
}

/** Emits each bid of the window's result. */
function flatten(): ProcessWindowFunction<readonly Q7Result[], Q7Result, number> {
  return {
    process(_key, _ctx, elements, out) {
      for (const list of elements) for (const r of list) out.collect(r);
    },
  };
}

/** The highest bids of every 10-second window. */
export function q7(events: DataStream<NexmarkEvent>): DataStream<Q7Result> {
  return events
    .flatMap(bids)
    .name('q7-bids')
    .map((b: Bid): Q7Result => ({ auction: b.auction, bidder: b.bidder, price: b.price, dateTime: b.dateTime, extra: b.extra }))
    .name('q7-project')
    .keyBy((b) => b.auction)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .aggregate<readonly Q7Result[], readonly Q7Result[], Q7Result>(highest<Q7Result>(), flatten)
    .uid('q7-per-auction')
    .name('q7-per-auction')
    .keyBy((b) => windowStart(b.dateTime, WINDOW_MS))
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .aggregate<readonly Q7Result[], readonly Q7Result[], Q7Result>(highest<Q7Result>(), flatten)
    .uid('q7-highest')
    .name('q7-highest');
}

if (isMain(import.meta.url)) await runQuery('q7', q7);
