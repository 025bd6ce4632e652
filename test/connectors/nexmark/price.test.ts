/**
 * Nexmark prices by Math.exp with a pow fallback near half cents: the same integers as
 * `Math.round(10 ** x * 100)`, on random exponents and on exponents placed at half cents.
 */
import { describe, expect, it } from 'vitest';
import { JavaRandom } from '../../../src/connectors/nexmark/java-random.ts';
import { powerOfTenCents } from '../../../src/connectors/nexmark/price.ts';

const byPow = (x: number) => Math.round(10 ** x * 100);

describe('powerOfTenCents', () => {
  it('equals Math.round(10 ** x * 100) for 1 M exponents drawn as the generator draws them', () => {
    const random = new JavaRandom();
    random.setSeed(28);
    const mismatches: number[] = [];
    for (let i = 0; i < 1_000_000; i++) {
      const x = random.nextDouble() * 6;
      if (powerOfTenCents(x) !== byPow(x)) mismatches.push(x);
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
  });

  it('equals it at exponents within a few ulps of a half cent, where exp alone rounds the other way', () => {
    const mismatches: number[] = [];
    let expAloneDiffers = 0;
    for (let cents = 100; cents < 1e8; cents = Math.floor(cents * 1.01) + 1) {
      const x0 = Math.log10((cents + 0.5) / 100);
      for (let ulps = -24; ulps <= 24; ulps++) {
        const x = x0 + ulps * 4 * Number.EPSILON;
        if (!(x >= 0 && x < 6)) continue;
        if (powerOfTenCents(x) !== byPow(x)) mismatches.push(x);
        if (Math.round(Math.exp(x * Math.LN10) * 100) !== byPow(x)) expAloneDiffers++;
      }
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    // The fallback is needed: without it these exponents would price differently.
    expect(expAloneDiffers).toBeGreaterThan(0);
  });
});
