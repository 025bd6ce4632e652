/**
 * Plain TypeScript answers of the Nexmark queries over an array of events, written straight from
 * the query definitions (nexmark-flink's SQL, Beam's Java where the SQL leaves a choice) with no
 * streaming at all: what the example jobs in examples/nexmark must produce on the same events.
 */
import type { Auction, Bid, NexmarkEvent, Person } from '../../src/connectors/nexmark/index.ts';
import type { Q1Result, Q2Result, Q3Result, Q4Result, Q5Result, Q7Result, Q8Result, Q11Result } from '../../examples/nexmark/results.ts';

const bidsOf = (events: readonly NexmarkEvent[]): Bid[] => events.filter((e): e is Bid => e.type === 'bid');
const auctionsOf = (events: readonly NexmarkEvent[]): Auction[] => events.filter((e): e is Auction => e.type === 'auction');
const personsOf = (events: readonly NexmarkEvent[]): Person[] => events.filter((e): e is Person => e.type === 'person');

/** q0 pass-through: every bid. */
export function q0Reference(events: readonly NexmarkEvent[]): Bid[] {
  return bidsOf(events);
}

/** q1 currency conversion: SELECT auction, bidder, 0.908 * price, dateTime, extra FROM bid. */
export function q1Reference(events: readonly NexmarkEvent[]): Q1Result[] {
  return bidsOf(events).map((b) => ({ auction: b.auction, bidder: b.bidder, price: b.price * 0.908, dateTime: b.dateTime, extra: b.extra }));
}

/** q2 selection: SELECT auction, price FROM bid WHERE auction % 123 = 0. */
export function q2Reference(events: readonly NexmarkEvent[]): Q2Result[] {
  return bidsOf(events)
    .filter((b) => b.auction % 123 === 0)
    .map((b) => ({ auction: b.auction, price: b.price }));
}

/** q3 local item suggestion: persons in OR, ID or CA joined with their category-10 auctions. */
export function q3Reference(events: readonly NexmarkEvent[]): Q3Result[] {
  const sellers = new Map<number, Person>();
  for (const p of personsOf(events)) if (p.state === 'OR' || p.state === 'ID' || p.state === 'CA') sellers.set(p.id, p);
  const out: Q3Result[] = [];
  for (const a of auctionsOf(events)) {
    const p = a.category === 10 ? sellers.get(a.seller) : undefined;
    if (p) out.push({ name: p.name, city: p.city, state: p.state, id: a.id });
  }
  return out;
}

/**
 * q4 average price per category, the final answer: an auction's closing price is its highest bid
 * with auction.dateTime <= bid.dateTime <= auction.expires (auctions without one are left out);
 * per category, the mean of those prices.
 */
export function q4Reference(events: readonly NexmarkEvent[]): Q4Result[] {
  const auctions = new Map<number, Auction>();
  for (const a of auctionsOf(events)) auctions.set(a.id, a);
  const highest = new Map<number, number>();
  for (const b of bidsOf(events)) {
    const a = auctions.get(b.auction);
    if (!a || b.dateTime < a.dateTime || b.dateTime > a.expires) continue;
    highest.set(a.id, Math.max(highest.get(a.id) ?? Number.NEGATIVE_INFINITY, b.price));
  }
  const perCategory = new Map<number, { sum: number; count: number }>();
  for (const [id, price] of highest) {
    const category = auctions.get(id)!.category;
    const c = perCategory.get(category) ?? { sum: 0, count: 0 };
    c.sum += price;
    c.count++;
    perCategory.set(category, c);
  }
  return [...perCategory].map(([category, c]) => ({ category, average: c.sum / c.count }));
}

/** Start of the tumbling window of `sizeMs` holding time `t`. */
const windowStart = (t: number, sizeMs: number): number => t - (((t % sizeMs) + sizeMs) % sizeMs);

/** q5 hot items: per sliding window (10 s, every 2 s), the auctions with the most bids (ties all). */
export function q5Reference(events: readonly NexmarkEvent[], sizeMs = 10_000, slideMs = 2_000): Q5Result[] {
  const counts = new Map<number, Map<number, number>>();
  for (const b of bidsOf(events)) {
    for (let start = windowStart(b.dateTime, slideMs); start > b.dateTime - sizeMs; start -= slideMs) {
      let perAuction = counts.get(start);
      if (!perAuction) counts.set(start, (perAuction = new Map()));
      perAuction.set(b.auction, (perAuction.get(b.auction) ?? 0) + 1);
    }
  }
  const out: Q5Result[] = [];
  for (const [starttime, perAuction] of counts) {
    const max = Math.max(...perAuction.values());
    for (const [auction, num] of perAuction) if (num === max) out.push({ auction, num, starttime });
  }
  return out;
}

/** q7 highest bid: per tumbling 10 s window [start, end), the bids with the window's highest price (Beam's definition). */
export function q7Reference(events: readonly NexmarkEvent[], sizeMs = 10_000): Q7Result[] {
  const best = new Map<number, Bid[]>();
  for (const b of bidsOf(events)) {
    const w = windowStart(b.dateTime, sizeMs);
    const current = best.get(w);
    if (!current || b.price > current[0]!.price) best.set(w, [b]);
    else if (b.price === current[0]!.price) current.push(b);
  }
  return [...best.values()].flat().map((b) => ({ auction: b.auction, bidder: b.bidder, price: b.price, dateTime: b.dateTime, extra: b.extra }));
}

/** q8 monitor new users: persons who registered and opened an auction in the same tumbling 10 s window. */
export function q8Reference(events: readonly NexmarkEvent[], sizeMs = 10_000): Q8Result[] {
  const sold = new Set<string>();
  for (const a of auctionsOf(events)) sold.add(`${a.seller}@${windowStart(a.dateTime, sizeMs)}`);
  const out: Q8Result[] = [];
  const seen = new Set<string>();
  for (const p of personsOf(events)) {
    const key = `${p.id}@${windowStart(p.dateTime, sizeMs)}`;
    if (sold.has(key) && !seen.has(key)) {
      seen.add(key);
      out.push({ id: p.id, name: p.name, starttime: windowStart(p.dateTime, sizeMs) });
    }
  }
  return out;
}

/**
 * q11 user sessions: per bidder, bids whose times are at most `gapMs` apart form one session
 * (session windows [t, t + gap) merge when they overlap or touch); its count, first time, and last
 * time plus the gap.
 */
export function q11Reference(events: readonly NexmarkEvent[], gapMs = 10_000): Q11Result[] {
  const times = new Map<number, number[]>();
  for (const b of bidsOf(events)) {
    let list = times.get(b.bidder);
    if (!list) times.set(b.bidder, (list = []));
    list.push(b.dateTime);
  }
  const out: Q11Result[] = [];
  for (const [bidder, list] of times) {
    list.sort((a, b) => a - b);
    let start = list[0]!;
    let last = start;
    let count = 0;
    for (const t of list) {
      if (t - last > gapMs) {
        out.push({ bidder, bidCount: count, starttime: start, endtime: last + gapMs });
        start = t;
        count = 0;
      }
      last = t;
      count++;
    }
    out.push({ bidder, bidCount: count, starttime: start, endtime: last + gapMs });
  }
  return out;
}
