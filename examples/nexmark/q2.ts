/**
 * Nexmark q2, selection: auction and price of the bids on one of every 123 auctions.
 * Run: npx tsx examples/nexmark/q2.ts [events] [parallelism]
 */
import type { Collector, DataStream } from 'weir-stream';
import type { NexmarkEvent } from 'weir-stream/nexmark';
import type { Q2Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';

function select(e: NexmarkEvent, out: Collector<Q2Result>): void {
  if (e.type === 'bid' && e.auction % 123 === 0) out.collect({ auction: e.auction, price: e.price });
}

/** Bids whose auction id is a multiple of 123, as (auction, price). */
export function q2(events: DataStream<NexmarkEvent>): DataStream<Q2Result> {
  return events.flatMap(select).name('q2-select');
}

if (isMain(import.meta.url)) await runQuery('q2', q2);
