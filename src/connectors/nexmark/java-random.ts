/**
 * java.util.Random's 48-bit linear congruential generator, bit for bit, so the Nexmark generator
 * draws what the reference generator (Apache Beam's, which seeds one `new Random(eventId)` per
 * event) draws. The 48-bit state is kept as two 24-bit halves: every product stays below 2^53, so
 * plain doubles compute it exactly. One instance is reseeded per event: no allocation per draw.
 */

const TWO_24 = 16777216;
const MULT_HI = 0x5de; // 0x5DEECE66D = MULT_HI * 2^24 + MULT_LO
const MULT_LO = 0xece66d;
const SCRAMBLE_HI = 0x5de;
const SCRAMBLE_LO = 0xece66d;

/** A reseedable java.util.Random: `setSeed(s)` then the same draws as `new Random(s)` in Java. */
export class JavaRandom {
  private hi = 0;
  private lo = 0;

  /**
   * Seeds like `new Random(seed)` / `setSeed(seed)`: only the low 48 bits of the seed count.
   * `seed` must be a safe integer (|seed| < 2^53); a negative one is taken in two's complement.
   */
  setSeed(seed: number): void {
    let s = seed % 281474976710656; // 2^48
    if (s < 0) s += 281474976710656;
    const hi = Math.floor(s / TWO_24);
    const lo = s - hi * TWO_24;
    this.hi = (hi ^ SCRAMBLE_HI) & 0xffffff;
    this.lo = (lo ^ SCRAMBLE_LO) & 0xffffff;
  }

  /** Java's `next(bits)` for 1 <= bits <= 32: the top `bits` bits of the advanced state, as a signed int when bits is 32. */
  next(bits: number): number {
    const p = this.lo * MULT_LO + 0xb;
    const carry = Math.floor(p / TWO_24);
    const lo = p - carry * TWO_24;
    const h = carry + this.hi * MULT_LO + this.lo * MULT_HI;
    const hi = h - Math.floor(h / TWO_24) * TWO_24;
    this.hi = hi;
    this.lo = lo;
    // The top `bits` of hi * 2^24 + lo, with int shifts (lo < 2^24, hi < 2^24).
    const top = bits >= 24 ? hi * (1 << (bits - 24)) + (lo >>> (48 - bits)) : hi >>> (24 - bits);
    return bits === 32 ? top | 0 : top;
  }

  /** Java's `nextInt()`: uniform over the 32-bit signed integers. */
  nextInt(): number {
    return this.next(32);
  }

  /** Java's `nextInt(bound)`: uniform in [0, bound), with Java's rejection of the biased tail. */
  nextIntBounded(bound: number): number {
    if (!(bound > 0 && bound <= 0x7fffffff && Number.isInteger(bound))) throw new RangeError(`nextInt bound must be an integer in [1, 2^31), got ${bound}`);
    let r = this.next(31);
    const m = bound - 1;
    if ((bound & m) === 0) return Math.floor((bound * r) / 2147483648);
    for (let u = r; ((u - (r = u % bound) + m) | 0) < 0; u = this.next(31));
    return r;
  }

  /** Java's `nextLong()`, as a BigInt (64-bit two's complement value). */
  nextLong(): bigint {
    const high = BigInt(this.next(32));
    const low = BigInt(this.next(32));
    return BigInt.asIntN(64, (high << 32n) + low);
  }

  /** Java's `nextDouble()`: uniform in [0, 1) with 53 random bits. */
  nextDouble(): number {
    return (this.next(26) * 134217728 + this.next(27)) / 9007199254740992;
  }
}

/**
 * Nexmark's `LongGenerator.nextLong(random, n)`: `nextInt(n)` below 2^31 - 1, otherwise
 * `abs(nextLong() % n)` (skewed, as the reference is).
 */
export function nextLongBelow(random: JavaRandom, n: number): number {
  if (n < 0x7fffffff) return random.nextIntBounded(n);
  const r = random.nextLong() % BigInt(n);
  return Number(r < 0n ? -r : r);
}
