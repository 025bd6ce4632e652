/**
 * Nexmark q3, local item suggestion: sellers in Oregon, Idaho or California, with each of their
 * category-10 auctions, as an incremental join. Auctions keyed by seller and persons keyed by id
 * meet in one keyed two-input function: a person is remembered (or remembered as out of those
 * states), an auction that arrives before its seller waits in list state, and every match is
 * emitted once, whichever side came first. Person ids are unique, so waiting auctions are dropped
 * once their seller is known. Run: npx tsx examples/nexmark/q3.ts [events] [parallelism]
 */
import { type DataStream, type KeyedCoProcessFunction, ListStateDescriptor, type ListState, type ValueState, ValueStateDescriptor } from 'weir-stream';
import type { Auction, NexmarkEvent, Person } from 'weir-stream/nexmark';
import type { Q3Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { auctions, persons } from './select.ts';

/** What the join keeps of a seller: their details, or false when they live elsewhere. */
type Seller = { readonly name: string; readonly city: string; readonly state: string } | false;

function joinSellers(): KeyedCoProcessFunction<number, Auction, Person, Q3Result> {
  let seller: ValueState<Seller>;
  let waiting: ListState<number>;
  return {
    open(ctx) {
      seller = ctx.getState(new ValueStateDescriptor<Seller>('seller'));
      waiting = ctx.getListState(new ListStateDescriptor<number>('waiting-auctions'));
    },
    processElement1(auction, _ctx, out) {
      const known = seller.value();
      if (known === undefined) waiting.add(auction.id);
      else if (known) out.collect({ name: known.name, city: known.city, state: known.state, id: auction.id });
    },
    processElement2(person, _ctx, out) {
      const local = person.state === 'OR' || person.state === 'ID' || person.state === 'CA';
      seller.update(local ? { name: person.name, city: person.city, state: person.state } : false);
      if (local) for (const id of waiting.get()) out.collect({ name: person.name, city: person.city, state: person.state, id });
      waiting.clear();
    },
  };
}

/** Sellers in OR, ID or CA joined with their category-10 auctions. */
export function q3(events: DataStream<NexmarkEvent>): DataStream<Q3Result> {
  const categoryTen = events
    .flatMap(auctions)
    .filter((a) => a.category === 10)
    .name('q3-auctions');
  const people = events.flatMap(persons).name('q3-persons');
  return categoryTen
    .keyBy((a) => a.seller)
    .connect(people.keyBy((p) => p.id))
    .process(joinSellers)
    .uid('q3-join')
    .name('q3-join');
}

if (isMain(import.meta.url)) await runQuery('q3', q3);
