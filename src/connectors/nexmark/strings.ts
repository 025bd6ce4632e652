/**
 * Nexmark's random strings (the reference's StringsGenerator), drawn from a JavaRandom in the
 * reference's order. Characters go into one reused byte buffer and become a string in one call.
 */
import type { JavaRandom } from './java-random.ts';

const MIN_STRING_LENGTH = 3;
/** Every character drawn is ASCII, so one byte each; latin1 decoding of a Buffer is the cheapest way to a string (measured: 2-4x `String.fromCharCode.apply`). */
const buffer = Buffer.allocUnsafe(4096);

function bufferString(length: number): string {
  return buffer.toString('latin1', 0, length);
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
  let rnd = 0;
  let n = 0;
  for (let i = 0; i < length; i++) {
    if (n === 0) {
      rnd = random.nextInt();
      n = 6;
    }
    buffer[i] = 97 + (rnd % 26);
    rnd = (rnd / 26) | 0;
    n--;
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
