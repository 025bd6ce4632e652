/**
 * The Nexmark auction model: people register, open auctions, and bid on them. Field names are the
 * reference generator's (nexmark-flink / Apache Beam); times are milliseconds since 1970 (the
 * reference's `Instant`s), ids and prices are numbers (the reference's `long`s, safe below 2^53).
 * `type` tells the three kinds apart, as the reference's `Event` wrapper does.
 */

/** A person registering with the auction site (2 % of events). */
export interface Person {
  /** The kind of event. */
  readonly type: 'person';
  /** Person id, from 1000 up, one per person event in order. */
  readonly id: number;
  /** First and last name, e.g. "Peter Jones". */
  readonly name: string;
  /** A random address at a random .com domain. */
  readonly emailAddress: string;
  /** Four groups of four digits. */
  readonly creditCard: string;
  /** One of ten US cities. */
  readonly city: string;
  /** One of AZ, CA, ID, OR, WA, WY. */
  readonly state: string;
  /** Event time, ms since 1970. */
  readonly dateTime: number;
  /** Padding to the configured average event size. */
  readonly extra: string;
}

/** A new auction (6 % of events). */
export interface Auction {
  /** The kind of event. */
  readonly type: 'auction';
  /** Auction id, from 1000 up, one per auction event in order. */
  readonly id: number;
  /** Random words, under 20 characters. */
  readonly itemName: string;
  /** Random words, under 100 characters. */
  readonly description: string;
  /** Starting price, in cents. */
  readonly initialBid: number;
  /** Reserve price, in cents (above `initialBid`). */
  readonly reserve: number;
  /** Event time (the auction opens), ms since 1970. */
  readonly dateTime: number;
  /** When the auction closes, ms since 1970. */
  readonly expires: number;
  /** Person id of the seller. */
  readonly seller: number;
  /** Category id, 10 to 14. */
  readonly category: number;
  /** Padding to the configured average event size. */
  readonly extra: string;
}

/** A bid on an auction (92 % of events). */
export interface Bid {
  /** The kind of event. */
  readonly type: 'bid';
  /** Auction id bid on. */
  readonly auction: number;
  /** Person id of the bidder. */
  readonly bidder: number;
  /** Bid price, in cents. */
  readonly price: number;
  /** Channel the bid came through (Google, Facebook, Baidu, Apple, or channel-N). */
  readonly channel: string;
  /** URL of the item page the bid came from. */
  readonly url: string;
  /** Event time, ms since 1970. */
  readonly dateTime: number;
  /** Padding to the configured average event size. */
  readonly extra: string;
}

/** One Nexmark event. */
export type NexmarkEvent = Person | Auction | Bid;
