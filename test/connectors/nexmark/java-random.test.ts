/**
 * JavaRandom against java.util.Random's definition written out with BigInt (the 48-bit LCG, no
 * shortcuts): every draw the generator uses, over seeds near every boundary of the 16-bit limbs.
 */
import { describe, expect, it } from 'vitest';
import { JavaRandom } from '../../../src/connectors/nexmark/java-random.ts';

const MASK_48 = (1n << 48n) - 1n;
const MULTIPLIER = 0x5deece66dn;

/** java.util.Random as its Javadoc defines it. */
class BigIntRandom {
  private seed = 0n;

  setSeed(seed: number): void {
    this.seed = (BigInt(seed) ^ MULTIPLIER) & MASK_48;
  }

  next(bits: number): number {
    this.seed = (this.seed * MULTIPLIER + 0xbn) & MASK_48;
    return Number(BigInt.asIntN(32, this.seed >> BigInt(48 - bits)));
  }

  nextIntBounded(bound: number): number {
    let r = this.next(31);
    const m = bound - 1;
    if ((bound & m) === 0) return Number((BigInt(bound) * BigInt(r)) >> 31n);
    for (let u = r; u - (r = u % bound) + m > 0x7fffffff; u = this.next(31));
    return r;
  }

  nextDouble(): number {
    return (this.next(26) * 2 ** 27 + this.next(27)) / 2 ** 53;
  }
}

/** Seeds around 0, the limb boundaries (2^16, 2^32), 2^48 and 2^53, negative ones, and a spread of others. */
function seeds(): number[] {
  const out: number[] = [];
  for (const edge of [0, 2 ** 16, 2 ** 32, 2 ** 47, 2 ** 48, 2 ** 53 - 64]) for (let d = -3; d <= 3; d++) out.push(edge + d);
  for (let i = 0; i < 2000; i++) out.push(Math.floor(((i * 0.6180339887) % 1) * 2 ** 53) * (i % 5 === 0 ? -1 : 1));
  return out;
}

describe('JavaRandom (16-bit limbs)', () => {
  it('draws what the BigInt definition draws: next(1..32), nextInt(bound), nextDouble', () => {
    const fast = new JavaRandom();
    const reference = new BigIntRandom();
    const mismatches: string[] = [];
    for (const seed of seeds()) {
      fast.setSeed(seed);
      reference.setSeed(seed);
      for (let bits = 1; bits <= 32; bits++) {
        const [a, b] = [fast.next(bits), reference.next(bits)];
        if (a !== b) mismatches.push(`seed ${seed} next(${bits}): ${a} != ${b}`);
      }
      for (const bound of [1, 2, 4, 13, 26, 28, 100, 1000, 2 ** 30, 1_000_000_007, 2 ** 31 - 1]) {
        const [a, b] = [fast.nextIntBounded(bound), reference.nextIntBounded(bound)];
        if (a !== b) mismatches.push(`seed ${seed} nextInt(${bound}): ${a} != ${b}`);
      }
      const [a, b] = [fast.nextDouble(), reference.nextDouble()];
      if (a !== b) mismatches.push(`seed ${seed} nextDouble: ${a} != ${b}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});
