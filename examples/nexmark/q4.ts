/**
 * Nexmark q4, average price per category: an auction's closing price is its highest bid placed
 * while it was open (auction.dateTime <= bid.dateTime <= expires); per category, the mean of the
 * closing prices. Written as nexmark-flink's SQL runs it, as a continuous query that updates its
 * answer: auctions and bids keyed by auction id meet in one keyed two-input function that keeps
 * the auction's category and times and its highest price so far (bids that arrive before their
 * auction wait in list state) and emits each change of the highest price; a keyed function per
 * category keeps the sum and count of the highest prices and emits the new average on every
 * change. The last average emitted for a category is the answer over all events seen.
 * Run: npx tsx examples/nexmark/q4.ts [events] [parallelism]
 */
import {
  type DataStream,
  type KeyedCoProcessFunction,
  type KeyedProcessFunction,
  ListStateDescriptor,
  type ListState,
  type ValueState,
  ValueStateDescriptor,
} from 'weir-stream';
import type { Auction, Bid, NexmarkEvent } from 'weir-stream/nexmark';
import type { Q4Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { auctions, bids } from './select.ts';

/** What the join keeps of an auction. */
interface OpenAuction {
  readonly category: number;
  readonly dateTime: number;
  readonly expires: number;
}

/** A change of an auction's highest price: `previous` is null for its first qualifying bid. */
interface ClosingPriceChange {
  readonly category: number;
  readonly previous: number | null;
  readonly price: number;
}

function highestBids(): KeyedCoProcessFunction<number, Auction, Bid, ClosingPriceChange> {
  let auction: ValueState<OpenAuction>;
  let highest: ValueState<number>;
  let early: ListState<[dateTime: number, price: number]>;
  const offer = (a: OpenAuction, dateTime: number, price: number, out: { collect(c: ClosingPriceChange): void }): void => {
    if (dateTime < a.dateTime || dateTime > a.expires) return;
    const previous = highest.value();
    if (previous !== undefined && previous >= price) return;
    highest.update(price);
    out.collect({ category: a.category, previous: previous ?? null, price });
  };
  return {
    open(ctx) {
      auction = ctx.getState(new ValueStateDescriptor<OpenAuction>('auction'));
      highest = ctx.getState(new ValueStateDescriptor<number>('highest'));
      early = ctx.getListState(new ListStateDescriptor<[number, number]>('early-bids'));
    },
    processElement1(a, _ctx, out) {
      const open = { category: a.category, dateTime: a.dateTime, expires: a.expires };
      auction.update(open);
      for (const [dateTime, price] of early.get()) offer(open, dateTime, price, out);
      early.clear();
    },
    processElement2(bid, _ctx, out) {
      const a = auction.value();
      if (a === undefined) early.add([bid.dateTime, bid.price]);
      else offer(a, bid.dateTime, bid.price, out);
    },
  };
}

function averagePerCategory(): KeyedProcessFunction<number, ClosingPriceChange, Q4Result> {
  let totals: ValueState<[sum: number, count: number]>;
  return {
    open(ctx) {
      totals = ctx.getState(new ValueStateDescriptor<[number, number]>('sum-count'));
    },
    processElement(change, _ctx, out) {
      const [sum, count] = totals.value() ?? [0, 0];
      const next: [number, number] = change.previous === null ? [sum + change.price, count + 1] : [sum - change.previous + change.price, count];
      totals.update(next);
      out.collect({ category: change.category, average: next[0] / next[1] });
    },
  };
}

/** The running average closing price per category (see the module comment). */
export function q4(events: DataStream<NexmarkEvent>): DataStream<Q4Result> {
  return events
    .flatMap(auctions)
    .name('q4-auctions')
    .keyBy((a) => a.id)
    .connect(
      events
        .flatMap(bids)
        .name('q4-bids')
        .keyBy((b) => b.auction),
    )
    .process(highestBids)
    .uid('q4-highest-bids')
    .name('q4-highest-bids')
    .keyBy((c) => c.category)
    .process(averagePerCategory)
    .uid('q4-average')
    .name('q4-average');
}

if (isMain(import.meta.url)) await runQuery('q4', q4);
