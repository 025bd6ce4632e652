/** The three kinds of Nexmark event as flatMap functions: `events.flatMap(bids)` is the stream of bids. */
import type { Collector } from 'weir-stream';
import type { Auction, Bid, NexmarkEvent, Person } from 'weir-stream/nexmark';

/** Emits the event if it is a bid. */
export function bids(event: NexmarkEvent, out: Collector<Bid>): void {
  if (event.type === 'bid') out.collect(event);
}

/** Emits the event if it is an auction. */
export function auctions(event: NexmarkEvent, out: Collector<Auction>): void {
  if (event.type === 'auction') out.collect(event);
}

/** Emits the event if it is a person. */
export function persons(event: NexmarkEvent, out: Collector<Person>): void {
  if (event.type === 'person') out.collect(event);
}
