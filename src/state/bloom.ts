/**
 * Bloom filters over encoded keys: "may this key be in the set?" with no false negatives. Used where
 * a false positive costs only work that was needed anyway without the filter: the change tracker's
 * per-epoch membership (a pre-image kept needlessly) and the embedded backend's stored-key filter (a
 * store read that finds nothing). Three probes by double hashing; ten bits per expected key give
 * ~1.5% false positives at the expected count.
 */

const BITS_PER_KEY = 10;
const PROBES = 3;

/** The murmur3 finaliser: every input bit affects every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A 32-bit hash of `bytes[from, to)` mixed with `seed` (FNV-1a, then murmur3's finaliser). */
export function bytesHash(bytes: Uint8Array, seed: number, from = 0, to = bytes.length): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return fmix(h ^ Math.imul(seed + 1, 0x9e3779b1));
}

/** A fixed-size Bloom filter over 32-bit hashes (from `bytesHash`). */
export class BloomFilter {
  private readonly words: Int32Array;
  private readonly mask: number;
  /** Hashes added (repeats included). */
  added = 0;

  constructor(
    /** The count at which the false-positive rate is ~1.5%; past it the rate grows. */
    readonly expectedKeys: number,
  ) {
    let bits = 1024;
    while (bits < expectedKeys * BITS_PER_KEY && bits < 2 ** 30) bits *= 2;
    this.words = new Int32Array(bits >>> 5);
    this.mask = bits - 1;
  }

  add(hash: number): void {
    const step = fmix(hash ^ 0x5bd1e995) | 1;
    for (let i = 0, b = hash; i < PROBES; i++, b = (b + step) >>> 0) {
      const bit = b & this.mask;
      this.words[bit >>> 5]! |= 1 << (bit & 31);
    }
    this.added++;
  }

  mayHold(hash: number): boolean {
    const step = fmix(hash ^ 0x5bd1e995) | 1;
    for (let i = 0, b = hash; i < PROBES; i++, b = (b + step) >>> 0) {
      const bit = b & this.mask;
      if ((this.words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** Bytes the filter holds. */
  get byteLength(): number {
    return this.words.byteLength;
  }
}

/**
 * A Bloom filter that grows without knowing its final count: once a layer holds its expected count,
 * a new layer twice its size takes the next keys, and a lookup asks every layer (a scalable Bloom
 * filter). From a first layer of n keys, 10 n keys take four layers.
 */
export class GrowingBloomFilter {
  private readonly layers: BloomFilter[];

  constructor(firstLayerKeys: number) {
    this.layers = [new BloomFilter(firstLayerKeys)];
  }

  add(hash: number): void {
    let top = this.layers[this.layers.length - 1]!;
    if (top.added >= top.expectedKeys) this.layers.push((top = new BloomFilter(2 * top.expectedKeys)));
    top.add(hash);
  }

  mayHold(hash: number): boolean {
    const layers = this.layers;
    for (let i = layers.length - 1; i >= 0; i--) if (layers[i]!.mayHold(hash)) return true;
    return false;
  }

  /** Bytes the layers hold. */
  get byteLength(): number {
    let n = 0;
    for (const l of this.layers) n += l.byteLength;
    return n;
  }
}
