/**
 * The Nexmark random strings against the per-letter form of the reference's loop (kept here): the
 * letter-pair table must give the same letters, signed digits included, for every length.
 */
import { describe, expect, it } from 'vitest';
import { JavaRandom } from '../../../src/connectors/nexmark/java-random.ts';
import { nextExactString } from '../../../src/connectors/nexmark/strings.ts';

/** The reference's StringsGenerator.nextExactString, one letter at a time. */
function exactStringPerLetter(random: JavaRandom, length: number): string {
  let s = '';
  let rnd = 0;
  let n = 0;
  for (let i = 0; i < length; i++) {
    if (n === 0) {
      rnd = random.nextInt();
      n = 6;
    }
    s += String.fromCharCode(97 + (rnd % 26));
    rnd = (rnd / 26) | 0;
    n--;
  }
  return s;
}

describe('nextExactString', () => {
  it('draws the letters of the per-letter loop for lengths 0 to 300 (negative ints give letters below a)', () => {
    const a = new JavaRandom();
    const b = new JavaRandom();
    const mismatches: string[] = [];
    let belowA = 0;
    for (let seed = 0; seed < 3000; seed++) {
      const length = seed % 301;
      a.setSeed(seed * 7919);
      b.setSeed(seed * 7919);
      const [fast, slow] = [nextExactString(a, length), exactStringPerLetter(b, length)];
      if (fast !== slow) mismatches.push(`seed ${seed * 7919} length ${length}: ${fast} != ${slow}`);
      if (/[^a-z]/.test(slow)) belowA++;
      // The same draws consumed: the next one agrees too.
      if (a.nextInt() !== b.nextInt()) mismatches.push(`seed ${seed * 7919}: draws out of step`);
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(belowA).toBeGreaterThan(1000);
  });
});
