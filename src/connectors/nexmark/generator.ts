/**
 * The Nexmark event generator: event number i (0, 1, 2, ...) is a pure function of the config and
 * i, so a source rewinds to any checkpointed index and subtasks can split the numbers among
 * themselves. It follows the reference generator (Beam's NexmarkGenerator and nexmark-flink's
 * model generators): event id = firstEventId + i; id mod 50 picks person (0), auction (1-3) or bid
 * (4-49); the draws come from `java.util.Random` seeded with the event id (xor the seed), in the
 * reference's order, so seed 0 gives Beam's values. Departures from nexmark-flink: one seeded
 * random per event instead of one unseeded random per generator (determinism), the bidder id gets
 * FIRST_PERSON_ID added once (nexmark-flink 0.2 adds it twice), and the channel URLs are drawn from
 * the seed instead of an unseeded random.
 */
import {
  FIRST_AUCTION_ID,
  FIRST_CATEGORY_ID,
  FIRST_PERSON_ID,
  HOT_BATCH,
  ID_LEAD,
  lastBase0AuctionId,
  lastBase0PersonId,
  NUM_CATEGORIES,
  type NexmarkConfig,
  timestampForEvent,
} from './config.ts';
import { ChannelUrls } from './channels.ts';
import { JavaRandom, nextLongBelow } from './java-random.ts';
import type { Auction, Bid, NexmarkEvent, Person } from './model.ts';
import { powerOfTenCents } from './price.ts';
import { nextExtra, nextString } from './strings.ts';

const US_STATES = ['AZ', 'CA', 'ID', 'OR', 'WA', 'WY'] as const;
const US_CITIES = ['Phoenix', 'Los Angeles', 'San Francisco', 'Boise', 'Portland', 'Bend', 'Redmond', 'Seattle', 'Kent', 'Cheyenne'] as const;
const FIRST_NAMES = ['Peter', 'Paul', 'Luke', 'John', 'Saul', 'Vicky', 'Kate', 'Julie', 'Sarah', 'Deiter', 'Walter'] as const;
const LAST_NAMES = ['Shultz', 'Abrams', 'Spencer', 'White', 'Bartels', 'Walton', 'Smith', 'Jones', 'Noris'] as const;
/** The seed is spread over the 48 bits java.util.Random keeps. */
const SEED_SPREAD = 0x9e3779b1;

/** Makes Nexmark events by number; one instance per thread of use (it reuses one random). */
export class NexmarkGenerator {
  private readonly random = new JavaRandom();
  private readonly channels: ChannelUrls;
  private readonly seedMix: number;

  constructor(readonly config: NexmarkConfig) {
    this.channels = new ChannelUrls(config.seed);
    this.seedMix = (config.seed * SEED_SPREAD) % 281474976710656;
  }

  /** Event number `n` (0-based). */
  event(n: number): NexmarkEvent {
    const config = this.config;
    const eventId = config.firstEventId + n;
    const timestamp = timestampForEvent(config, n);
    this.random.setSeed(this.seedMix === 0 ? eventId : xor48(eventId, this.seedMix));
    const rem = eventId % config.totalProportion;
    if (rem < config.personProportion) return this.person(eventId, timestamp);
    if (rem < config.personProportion + config.auctionProportion) return this.auction(n, eventId, timestamp);
    return this.bid(eventId, timestamp);
  }

  private person(eventId: number, timestamp: number): Person {
    const random = this.random;
    const id = lastBase0PersonId(this.config, eventId) + FIRST_PERSON_ID;
    const name = `${FIRST_NAMES[random.nextIntBounded(FIRST_NAMES.length)]} ${LAST_NAMES[random.nextIntBounded(LAST_NAMES.length)]}`;
    const emailAddress = `${nextString(random, 7)}@${nextString(random, 5)}.com`;
    let creditCard = '';
    for (let i = 0; i < 4; i++) creditCard += (i > 0 ? ' ' : '') + String(random.nextIntBounded(10000)).padStart(4, '0');
    const city = US_CITIES[random.nextIntBounded(US_CITIES.length)]!;
    const state = US_STATES[random.nextIntBounded(US_STATES.length)]!;
    const size = 8 + name.length + emailAddress.length + creditCard.length + city.length + state.length;
    const extra = nextExtra(random, size, this.config.avgPersonByteSize);
    return { type: 'person', id, name, emailAddress, creditCard, city, state, dateTime: timestamp, extra };
  }

  private auction(n: number, eventId: number, timestamp: number): Auction {
    const random = this.random;
    const config = this.config;
    const id = lastBase0AuctionId(config, eventId) + FIRST_AUCTION_ID;
    const seller =
      (random.nextIntBounded(config.hotSellersRatio) > 0
        ? Math.floor(lastBase0PersonId(config, eventId) / HOT_BATCH) * HOT_BATCH
        : this.nextBase0PersonId(eventId)) + FIRST_PERSON_ID;
    const category = FIRST_CATEGORY_ID + random.nextIntBounded(NUM_CATEGORIES);
    const initialBid = nextPrice(random);
    const expires = timestamp + this.nextAuctionLengthMs(n, timestamp);
    const itemName = nextString(random, 20);
    const description = nextString(random, 100);
    const reserve = initialBid + nextPrice(random);
    const size = 8 + itemName.length + description.length + 8 + 8 + 8 + 8 + 8;
    const extra = nextExtra(random, size, config.avgAuctionByteSize);
    return { type: 'auction', id, itemName, description, initialBid, reserve, dateTime: timestamp, expires, seller, category, extra };
  }

  private bid(eventId: number, timestamp: number): Bid {
    const random = this.random;
    const config = this.config;
    const auction =
      (random.nextIntBounded(config.hotAuctionRatio) > 0
        ? Math.floor(lastBase0AuctionId(config, eventId) / HOT_BATCH) * HOT_BATCH
        : this.nextBase0AuctionId(eventId)) + FIRST_AUCTION_ID;
    const bidder =
      (random.nextIntBounded(config.hotBiddersRatio) > 0
        ? Math.floor(lastBase0PersonId(config, eventId) / HOT_BATCH) * HOT_BATCH + 1
        : this.nextBase0PersonId(eventId)) + FIRST_PERSON_ID;
    const price = nextPrice(random);
    const channels = this.channels;
    const index = channels.next(random);
    const extra = nextExtra(random, 32, config.avgBidByteSize);
    return { type: 'bid', auction, bidder, price, channel: channels.channel(index), url: channels.url(index), dateTime: timestamp, extra };
  }

  /** A random one of the newest `numActivePeople` people, or up to ID_LEAD beyond the newest. */
  private nextBase0PersonId(eventId: number): number {
    const numPeople = lastBase0PersonId(this.config, eventId) + 1;
    const activePeople = Math.min(numPeople, this.config.numActivePeople);
    return numPeople - activePeople + nextLongBelow(this.random, activePeople + ID_LEAD);
  }

  /** A random one of the newest `numInFlightAuctions` auctions, or up to ID_LEAD beyond the newest. */
  private nextBase0AuctionId(eventId: number): number {
    const maxAuction = lastBase0AuctionId(this.config, eventId);
    const minAuction = Math.max(maxAuction - this.config.numInFlightAuctions, 0);
    return minAuction + nextLongBelow(this.random, maxAuction - minAuction + 1 + ID_LEAD);
  }

  /** Auction length averaging the event time until numInFlightAuctions more auctions are generated. */
  private nextAuctionLengthMs(n: number, timestamp: number): number {
    const config = this.config;
    const eventsForAuctions = Math.floor((config.numInFlightAuctions * config.totalProportion) / config.auctionProportion);
    const horizonMs = timestampForEvent(config, n + eventsForAuctions) - timestamp;
    return 1 + nextLongBelow(this.random, Math.max(horizonMs * 2, 1));
  }
}

/** Price in cents, log-uniform over 1 to 1,000,000 dollars. */
function nextPrice(random: JavaRandom): number {
  return powerOfTenCents(random.nextDouble() * 6);
}

/** a xor b over 48-bit non-negative integers. */
function xor48(a: number, b: number): number {
  const aHi = Math.floor(a / 16777216) % 16777216;
  const bHi = Math.floor(b / 16777216) % 16777216;
  return ((aHi ^ bHi) & 0xffffff) * 16777216 + (((a % 16777216) ^ (b % 16777216)) & 0xffffff);
}
