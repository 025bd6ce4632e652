/**
 * The Nexmark generator's parameters, with the reference generator's defaults (nexmark-flink's
 * NexmarkConfiguration / Beam's NexmarkConfiguration), and the pure helpers that derive ids and
 * event times from an event number. Everything here is a function of the config and the number.
 */
import { ConfigError } from '../../core/errors.ts';

/** Options of the Nexmark generator; every field but `events` has the reference's default. */
export interface NexmarkOptions {
  /** Number of events to generate (>= 0); Infinity for an unbounded stream. */
  readonly events: number;
  /**
   * Seed mixed into every event's random draws; default 0, which draws exactly what Beam's
   * generator draws (`new Random(eventId)` per event).
   */
  readonly seed?: number;
  /** Events per second over all subtasks, paced by the job's clock; omit for as fast as possible. */
  readonly ratePerSec?: number;
  /** Event-time rate: event i has time `baseTimeMs + floor(i * 1e6 / eventRatePerSec) / 1000`; default 10,000 events/s. */
  readonly eventRatePerSec?: number;
  /** Event time of the first event, ms since 1970; default 1,436,918,400,000 (2015-07-15, the reference's). */
  readonly baseTimeMs?: number;
  /** Id of the first event (ids seed the draws); default 0. */
  readonly firstEventId?: number;
  /** Persons in each `personProportion + auctionProportion + bidProportion` events; default 1 (2 %). */
  readonly personProportion?: number;
  /** Auctions in each such group of events; default 3 (6 %). */
  readonly auctionProportion?: number;
  /** Bids in each such group of events; default 46 (92 %). */
  readonly bidProportion?: number;
  /** 1 - 1/ratio of bids go to a hot auction; default 2. */
  readonly hotAuctionRatio?: number;
  /** 1 - 1/ratio of auctions are by a hot seller; default 4. */
  readonly hotSellersRatio?: number;
  /** 1 - 1/ratio of bids are by a hot bidder; default 4. */
  readonly hotBiddersRatio?: number;
  /** People a random seller or bidder is drawn from (the newest ones); default 1,000. */
  readonly numActivePeople?: number;
  /** Auctions a random bid is drawn over (the newest ones); default 100. */
  readonly numInFlightAuctions?: number;
  /** Average size, in bytes, the `extra` field pads person events to; default 200. */
  readonly avgPersonByteSize?: number;
  /** Average size, in bytes, of auction events; default 500. */
  readonly avgAuctionByteSize?: number;
  /** Average size, in bytes, of bid events; default 100. */
  readonly avgBidByteSize?: number;
}

/** The options with defaults applied and derived figures. */
export interface NexmarkConfig extends Required<Omit<NexmarkOptions, 'ratePerSec'>> {
  readonly ratePerSec: number | undefined;
  readonly totalProportion: number;
  /** Event time between consecutive events, in microseconds. */
  readonly interEventDelayUs: number;
}

export const FIRST_PERSON_ID = 1000;
export const FIRST_AUCTION_ID = 1000;
export const FIRST_CATEGORY_ID = 10;
export const NUM_CATEGORIES = 5;
/** Hot sellers, bidders and auctions are the first of each batch of this many. */
export const HOT_BATCH = 100;
/** How far beyond the newest person or auction a random reference may point. */
export const ID_LEAD = 10;
export const DEFAULT_BASE_TIME_MS = 1_436_918_400_000;

/**
 * Applies defaults and checks the options.
 * @throws ConfigError naming the first option at fault.
 */
export function resolveNexmarkConfig(options: NexmarkOptions): NexmarkConfig {
  const c = {
    events: options.events,
    seed: options.seed ?? 0,
    ratePerSec: options.ratePerSec,
    eventRatePerSec: options.eventRatePerSec ?? 10_000,
    baseTimeMs: options.baseTimeMs ?? DEFAULT_BASE_TIME_MS,
    firstEventId: options.firstEventId ?? 0,
    personProportion: options.personProportion ?? 1,
    auctionProportion: options.auctionProportion ?? 3,
    bidProportion: options.bidProportion ?? 46,
    hotAuctionRatio: options.hotAuctionRatio ?? 2,
    hotSellersRatio: options.hotSellersRatio ?? 4,
    hotBiddersRatio: options.hotBiddersRatio ?? 4,
    numActivePeople: options.numActivePeople ?? 1000,
    numInFlightAuctions: options.numInFlightAuctions ?? 100,
    avgPersonByteSize: options.avgPersonByteSize ?? 200,
    avgAuctionByteSize: options.avgAuctionByteSize ?? 500,
    avgBidByteSize: options.avgBidByteSize ?? 100,
  };
  if (typeof c.events !== 'number' || !(c.events >= 0) || !(Number.isInteger(c.events) || c.events === Infinity))
    throw new ConfigError('nexmark.events', `must be an integer >= 0 or Infinity, got ${JSON.stringify(options.events)}`);
  if (c.ratePerSec !== undefined && !(c.ratePerSec > 0)) throw new ConfigError('nexmark.ratePerSec', `must be > 0, got ${c.ratePerSec}`);
  for (const name of ['seed', 'baseTimeMs', 'firstEventId'] as const) {
    if (!Number.isSafeInteger(c[name]) || c[name] < 0) throw new ConfigError(`nexmark.${name}`, `must be a safe integer >= 0, got ${c[name]}`);
  }
  if (!(c.eventRatePerSec > 0)) throw new ConfigError('nexmark.eventRatePerSec', `must be > 0, got ${c.eventRatePerSec}`);
  for (const name of [
    'personProportion',
    'auctionProportion',
    'bidProportion',
    'hotAuctionRatio',
    'hotSellersRatio',
    'hotBiddersRatio',
    'numActivePeople',
    'numInFlightAuctions',
    'avgPersonByteSize',
    'avgAuctionByteSize',
    'avgBidByteSize',
  ] as const) {
    if (!Number.isInteger(c[name]) || c[name] < 1) throw new ConfigError(`nexmark.${name}`, `must be an integer >= 1, got ${c[name]}`);
  }
  return { ...c, totalProportion: c.personProportion + c.auctionProportion + c.bidProportion, interEventDelayUs: 1_000_000 / c.eventRatePerSec };
}

/** Event time of event number `n` (the reference's `timestampForEvent`). */
export function timestampForEvent(config: NexmarkConfig, n: number): number {
  return config.baseTimeMs + Math.floor(Math.floor(n * config.interEventDelayUs) / 1000);
}

/** The newest person id (base 0) at event id `eventId`: the current one when it is a person event. */
export function lastBase0PersonId(config: NexmarkConfig, eventId: number): number {
  const epoch = Math.floor(eventId / config.totalProportion);
  let offset = eventId - epoch * config.totalProportion;
  if (offset >= config.personProportion) offset = config.personProportion - 1;
  return epoch * config.personProportion + offset;
}

/** The newest auction id (base 0) at event id `eventId`: the current one when it is an auction event. */
export function lastBase0AuctionId(config: NexmarkConfig, eventId: number): number {
  let epoch = Math.floor(eventId / config.totalProportion);
  let offset = eventId - epoch * config.totalProportion;
  if (offset < config.personProportion) {
    epoch--;
    offset = config.auctionProportion - 1;
  } else if (offset >= config.personProportion + config.auctionProportion) {
    offset = config.auctionProportion - 1;
  } else {
    offset -= config.personProportion;
  }
  return epoch * config.auctionProportion + offset;
}
