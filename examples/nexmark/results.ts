/**
 * What the Nexmark queries emit. The plain reference computations (test/support/nexmark-reference.ts)
 * produce the same shapes, so a test compares the two directly.
 */

/** q1: a bid with its price converted from dollars to euros (0.908 per dollar). */
export interface Q1Result {
  readonly auction: number;
  readonly bidder: number;
  /** price * 0.908. */
  readonly price: number;
  readonly dateTime: number;
  readonly extra: string;
}

/** q2: a bid on one of every 123 auctions. */
export interface Q2Result {
  readonly auction: number;
  readonly price: number;
}

/** q3: a seller in Oregon, Idaho or California and one of their category-10 auctions. */
export interface Q3Result {
  readonly name: string;
  readonly city: string;
  readonly state: string;
  /** The auction id. */
  readonly id: number;
}

/** q4: the running average closing price of the auctions of a category (an update: the newest one per category is the answer so far). */
export interface Q4Result {
  readonly category: number;
  /** Mean over the category's auctions (with at least one bid in their lifetime) of their highest bid, in cents. */
  readonly average: number;
}

/** q5: an auction with the most bids in a sliding window (10 s long, every 2 s); ties give several. */
export interface Q5Result {
  readonly auction: number;
  /** Bids on it in the window. */
  readonly num: number;
  /** Window start, ms since 1970. */
  readonly starttime: number;
}

/** q7: a bid with the highest price of its tumbling 10 s window. */
export interface Q7Result {
  readonly auction: number;
  readonly bidder: number;
  readonly price: number;
  readonly dateTime: number;
  readonly extra: string;
}

/** q8: a person who registered and opened an auction within the same tumbling 10 s window. */
export interface Q8Result {
  readonly id: number;
  readonly name: string;
  /** Window start, ms since 1970. */
  readonly starttime: number;
}

/** q11: one bidding session of a user (bids at most 10 s apart). */
export interface Q11Result {
  readonly bidder: number;
  readonly bidCount: number;
  /** Time of the session's first bid. */
  readonly starttime: number;
  /** Time of its last bid plus the 10 s gap. */
  readonly endtime: number;
}
