/**
 * Plain answers of Nexmark q5 and q8 (the definitions of test/support/nexmark-reference.ts) over
 * the generator's events one at a time, without holding them all: the digest (nexmark-digest.ts)
 * the tcp benchmark's Nexmark runs must produce.
 */
import { resolveNexmarkConfig } from '../../src/connectors/nexmark/config.ts';
import { NexmarkGenerator } from '../../src/connectors/nexmark/generator.ts';
import { DigestBuilder, type Digest, type DigestedQuery } from './nexmark-digest.ts';

/** Start of the tumbling window of `sizeMs` holding time `t`. */
const windowStart = (t: number, sizeMs: number): number => t - (((t % sizeMs) + sizeMs) % sizeMs);

export function referenceDigest(query: DigestedQuery, events: number): Digest {
  const generator = new NexmarkGenerator(resolveNexmarkConfig({ events }));
  const digest = new DigestBuilder(query);
  if (query === 'q5') {
    // Per sliding window (10 s, every 2 s), the auctions with the most bids (ties all).
    const counts = new Map<number, Map<number, number>>();
    for (let i = 0; i < events; i++) {
      const b = generator.event(i);
      if (b.type !== 'bid') continue;
      for (let start = windowStart(b.dateTime, 2_000); start > b.dateTime - 10_000; start -= 2_000) {
        let perAuction = counts.get(start);
        if (!perAuction) counts.set(start, (perAuction = new Map()));
        perAuction.set(b.auction, (perAuction.get(b.auction) ?? 0) + 1);
      }
    }
    for (const [starttime, perAuction] of counts) {
      let max = 0;
      for (const n of perAuction.values()) if (n > max) max = n;
      for (const [auction, num] of perAuction) if (num === max) digest.add({ auction, num, starttime });
    }
  } else {
    // Persons who registered and opened an auction in the same tumbling 10 s window, once per person and window.
    const sold = new Set<string>();
    const persons: Array<{ id: number; name: string; starttime: number }> = [];
    for (let i = 0; i < events; i++) {
      const e = generator.event(i);
      if (e.type === 'auction') sold.add(`${e.seller}@${windowStart(e.dateTime, 10_000)}`);
      else if (e.type === 'person') persons.push({ id: e.id, name: e.name, starttime: windowStart(e.dateTime, 10_000) });
    }
    const seen = new Set<string>();
    for (const p of persons) {
      const key = `${p.id}@${p.starttime}`;
      if (sold.has(key) && !seen.has(key)) {
        seen.add(key);
        digest.add(p);
      }
    }
  }
  return digest.digest;
}
