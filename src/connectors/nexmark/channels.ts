/**
 * The channel and URL of a bid (nexmark-flink's bid model): half the bids come through one of four
 * hot channels, the others through channel-0 .. channel-9999, whose URLs (a random base path, with
 * `&channel_id=` for 9 in 10) are drawn once per channel from the seed and cached.
 */
import { JavaRandom } from './java-random.ts';
import { nextString } from './strings.ts';

const HOT_CHANNELS = ['Google', 'Facebook', 'Baidu', 'Apple'] as const;
const HOT_CHANNELS_RATIO = 2;
const CHANNELS_NUMBER = 10_000;
const UNDERSCORE = 95;

/** Channel names and URLs by index: 0-3 the hot channels, 4 + N channel-N. */
export class ChannelUrls {
  private readonly channels: string[] = [...HOT_CHANNELS];
  private readonly urls: string[] = [];
  private readonly random = new JavaRandom();

  constructor(private readonly seed: number) {
    for (let i = 0; i < HOT_CHANNELS.length; i++) this.urls.push(this.baseUrl(-1 - i));
  }

  /** Draws the channel of a bid from `random` (the bid's own random, in the reference's order). */
  next(random: JavaRandom): number {
    if (random.nextIntBounded(HOT_CHANNELS_RATIO) > 0) return random.nextIntBounded(HOT_CHANNELS.length);
    const n = random.nextIntBounded(CHANNELS_NUMBER);
    const index = HOT_CHANNELS.length + n;
    if (this.channels[index] === undefined) {
      let url = this.baseUrl(n);
      if (this.random.nextIntBounded(10) > 0) url += `&channel_id=${Math.abs(reverseInt32(n))}`;
      this.channels[index] = `channel-${n}`;
      this.urls[index] = url;
    }
    return index;
  }

  channel(index: number): string {
    return this.channels[index]!;
  }

  url(index: number): string {
    return this.urls[index]!;
  }

  /** A URL with three random path parts, drawn from (seed, which): the same in every process. */
  private baseUrl(which: number): string {
    const random = this.random;
    random.setSeed(this.seed * 1_000_003 + which + 0x4e584d);
    const part = () => nextString(random, 5, UNDERSCORE);
    return `https://www.nexmark.com/${part()}/${part()}/${part()}/item.htm?query=1`;
  }
}

/** Java's Integer.reverse: the 32 bits in reverse order, as a signed int. */
function reverseInt32(x: number): number {
  let v = x | 0;
  let r = 0;
  for (let i = 0; i < 32; i++) {
    r = (r << 1) | (v & 1);
    v >>>= 1;
  }
  return r | 0;
}
