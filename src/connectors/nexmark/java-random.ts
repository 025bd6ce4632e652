/**
 * java.util.Random's 48-bit linear congruential generator, bit for bit, so the Nexmark generator
 * draws what the reference generator (Apache Beam's, which seeds one `new Random(eventId)` per
 * event) draws. The 48-bit state is kept as three 16-bit limbs and advanced with `Math.imul` and
 * int shifts only: a draw is one dependent chain of int operations (the earlier 24-bit halves in
 * doubles went through a float divide and floor per draw, about twice the latency). One instance is
 * reseeded per event: no allocation per draw.
 */

const TWO_32 = 4294967296;
const TWO_48 = 281474976710656;
// 0x5DEECE66D = M2 * 2^32 + M1 * 2^16 + M0
const M0 = 0xe66d;
const M1 = 0xdeec;
const M2 = 0x5;
const ADDEND = 0xb;

/** A reseedable java.util.Random: `setSeed(s)` then the same draws as `new Random(s)` in Java. */
export class JavaRandom {
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;

  /**
   * Seeds like `new Random(seed)` / `setSeed(seed)`: only the low 48 bits of the seed count.
   * `seed` must be a safe integer (|seed| < 2^53); a negative one is taken in two's complement.
   */
  setSeed(seed: number): void {
    let s = seed;
    if (!(s >= 0 && s < TWO_48)) {
      s = seed % TWO_48;
      if (s < 0) s += TWO_48;
    }
    // `&` and `>>>` take an integer below 2^53 modulo 2^32 exactly.
    this.s0 = (s & 0xffff) ^ M0;
    this.s1 = ((s >>> 16) & 0xffff) ^ M1;
    this.s2 = (Math.floor(s / TWO_32) & 0xffff) ^ M2;
  }

  /**
   * Advances the state: s = (s * 0x5DEECE66D + 0xB) mod 2^48, limb by limb. Each 16 x 16-bit
   * product is below 2^32, so `Math.imul` gives its bits exactly (read unsigned with `>>>`);
   * the top limb only needs its products modulo 2^16.
   */
  private step(): void {
    const s0 = this.s0;
    const s1 = this.s1;
    const p00 = Math.imul(s0, M0) + ADDEND; // < 2^32: exact, no carry out of the addend
    const p01 = Math.imul(s0, M1);
    const p10 = Math.imul(s1, M0);
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    this.s0 = p00 & 0xffff;
    this.s1 = mid & 0xffff;
    this.s2 = ((mid >>> 16) + (p01 >>> 16) + (p10 >>> 16) + s0 * M2 + Math.imul(s1, M1) + Math.imul(this.s2, M0)) & 0xffff;
  }

  /** Java's `next(bits)` for 1 <= bits <= 32: the top `bits` bits of the advanced state, as a signed int when bits is 32. */
  next(bits: number): number {
    this.step();
    const top32 = (this.s2 << 16) | this.s1;
    return bits === 32 ? top32 : top32 >>> (32 - bits);
  }

  /** Java's `nextInt()`: uniform over the 32-bit signed integers. */
  nextInt(): number {
    this.step();
    return (this.s2 << 16) | this.s1;
  }

  /** Java's `next(31)`: the top 31 bits of the advanced state. */
  private next31(): number {
    this.step();
    return (this.s2 << 15) | (this.s1 >>> 1);
  }

  /** Java's `nextInt(bound)`: uniform in [0, bound), with Java's rejection of the biased tail. */
  nextIntBounded(bound: number): number {
    if (!(bound > 0 && bound <= 0x7fffffff && Number.isInteger(bound))) throw new RangeError(`nextInt bound must be an integer in [1, 2^31), got ${bound}`);
    let r = this.next31();
    const m = bound - 1;
    if ((bound & m) === 0) return Math.floor((bound * r) / 2147483648);
    for (let u = r; ((u - (r = u % bound) + m) | 0) < 0; u = this.next31());
    return r;
  }

  /** Java's `nextLong()`, as a BigInt (64-bit two's complement value). */
  nextLong(): bigint {
    const high = BigInt(this.nextInt());
    const low = BigInt(this.nextInt());
    return BigInt.asIntN(64, (high << 32n) + low);
  }

  /** Java's `nextDouble()`: uniform in [0, 1) with 53 random bits (next(26) then next(27)). */
  nextDouble(): number {
    this.step();
    const high26 = (this.s2 << 10) | (this.s1 >>> 6);
    this.step();
    const low27 = (this.s2 << 11) | (this.s1 >>> 5);
    return (high26 * 134217728 + low27) / 9007199254740992;
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
