/**
 * Nexmark's random strings (the reference's StringsGenerator), drawn from a JavaRandom in the
 * reference's order. Characters go into one reused byte buffer and become a string in one call.
 */
import type { JavaRandom } from './java-random.ts';

const MIN_STRING_LENGTH = 3;
/**
 * Every character drawn is ASCII, so one byte each; latin1 decoding of a Buffer is the cheapest way
 * to a string (measured: 2-4x `String.fromCharCode.apply`). `latin1Slice` is what
 * `toString('latin1', start, end)` calls after its argument checks, which cost as much again for
 * strings this short (68 characters: ~50 instead of ~90 ns); the bounds here are always valid.
 */
const bytes = new ArrayBuffer(4096);
const buffer = Buffer.from(bytes) as Buffer & { latin1Slice?: (start: number, end: number) => string };
const latin1Slice = typeof buffer.latin1Slice === 'function';
/** The buffer two letters at a time (at even offsets), for the letter pairs below. */
const buffer16 = new Uint16Array(bytes);

/**
 * Two letters at once: entry v + 675 holds the letters of v and v / 26 (Java's signed % and /) for
 * -675 <= v <= 675, i.e. the two lowest base-26 digits of any int r with v = r % 676, laid out in
 * memory as two bytes (so the 16-bit value suits either byte order).
 */
const LETTER_PAIRS = (() => {
  const pairBytes = new Uint8Array(2 * 1351);
  for (let v = -675; v <= 675; v++) {
    pairBytes[2 * (v + 675)] = 97 + (v % 26);
    pairBytes[2 * (v + 675) + 1] = 97 + (((v / 26) | 0) % 26);
  }
  return new Uint16Array(pairBytes.buffer);
})();

function bufferString(length: number): string {
  return latin1Slice ? buffer.latin1Slice!(0, length) : buffer.toString('latin1', 0, length);
}

/** A string of 3 to maxLength - 1 letters (lowercase, and `special` with odds 1/13), trimmed of spaces. */
export function nextString(random: JavaRandom, maxLength: number, special = 32): string {
  const length = MIN_STRING_LENGTH + random.nextIntBounded(maxLength - MIN_STRING_LENGTH);
  for (let i = 0; i < length; i++) {
    buffer[i] = random.nextIntBounded(13) === 0 ? special : 97 + random.nextIntBounded(26);
  }
  const s = bufferString(length);
  return special === 32 ? s.trim() : s;
}

/** A string of exactly `length` characters, six drawn from each random int (as the reference: `'a' + rnd % 26` with Java's signed remainder). */
export function nextExactString(random: JavaRandom, length: number): string {
  if (length > buffer.length) throw new RangeError(`extra of ${length} characters is longer than ${buffer.length}`);
  const whole = length - (length % 6);
  let i = 0;
  // Six letters per int, the base-26 digits of rnd, lowest first, signed as Java's / and % (Java
  // divides rnd by 26 after each letter; dividing by 26^2k at once gives the same digits), two at
  // a time from LETTER_PAIRS. i is a multiple of 6, so i / 2 indexes buffer16.
  while (i < whole) {
    const rnd = random.nextInt();
    const half = i >> 1;
    buffer16[half] = LETTER_PAIRS[(rnd % 676) + 675]!;
    buffer16[half + 1] = LETTER_PAIRS[(((rnd / 676) | 0) % 676) + 675]!;
    buffer16[half + 2] = LETTER_PAIRS[(((rnd / 456976) | 0) % 676) + 675]!;
    i += 6;
  }
  if (i < length) {
    let rnd = random.nextInt();
    for (; i < length; i++) {
      buffer[i] = 97 + (rnd % 26);
      rnd = (rnd / 26) | 0;
    }
  }
  return bufferString(length);
}

/** Padding such that `currentSize` plus its length averages `desiredAverageSize` (±20 %). */
export function nextExtra(random: JavaRandom, currentSize: number, desiredAverageSize: number): string {
  if (currentSize > desiredAverageSize) return '';
  const remaining = desiredAverageSize - currentSize;
  const delta = Math.round(remaining * 0.2);
  const minSize = remaining - delta;
  const size = minSize + (delta === 0 ? 0 : random.nextIntBounded(2 * delta));
  return nextExactString(random, size);
}
