/**
 * The keys changed since the last completed checkpoint, for incremental snapshots. Changes are kept
 * per snapshot interval ("epochs"): the sync phase of snapshot n closes the open epoch under id n.
 * A delta snapshot needs every epoch after the completed checkpoint it extends; completing n drops
 * the epochs up to n. An aborted snapshot's epoch is simply never dropped, so the next delta
 * includes its changes and nothing is lost. Tracking is bounded: past `trackedKeysMax` keys the
 * tracker gives up, and the next snapshot must be a new base.
 *
 * Keys are kept as their encoded bytes, appended to one growing buffer per slot and epoch (a
 * `KeyLog`), not as the keys themselves in a `Set`: a set entry with its key string took ~70 bytes
 * and kept every evicted key's string alive, against ~13 bytes here for a 10-character string key
 * (a 1 M-key job tracked ~560 k keys at a time: BENCHMARKS.md, state). A key recorded twice in an
 * epoch (evicted and loaded again) is kept twice; readers take each key once (`changedKeys`).
 * Membership ("was this key changed?", asked by a running delta snapshot for each key the cache
 * evicts) is answered by a Bloom filter per epoch: a false positive only keeps a pre-image the
 * snapshot does not need; there are no false negatives.
 */
import type { Key } from '../key-groups.ts';
import { decodeValue } from '../codec.ts';

/** The slot of a state's key group: states and key groups both fit in 16 bits. */
export function changeSlot(stateId: number, groupIndex: number): number {
  return stateId * 0x10000 + groupIndex;
}

export function slotGroupIndex(slot: number): number {
  return slot % 0x10000;
}

/** Encoded keys of at most this many bytes (lmdb's key limit is below it). */
const KEY_BYTES_MAX = 0xffff;
const INITIAL_BYTES = 256;

/** Encoded keys appended in one buffer, each after its length (u16, big-endian). */
export class KeyLog {
  private bytes = new Uint8Array(INITIAL_BYTES);
  private used = 0;
  /** Keys appended (a key appended twice counts twice). */
  count = 0;

  add(encoded: Uint8Array): void {
    const n = encoded.byteLength;
    if (n > KEY_BYTES_MAX) throw new RangeError(`a tracked key of ${n} encoded bytes is longer than ${KEY_BYTES_MAX}`);
    const end = this.used + 2 + n;
    if (end > this.bytes.byteLength) {
      const grown = new Uint8Array(Math.max(end, 2 * this.bytes.byteLength));
      grown.set(this.bytes.subarray(0, this.used));
      this.bytes = grown;
    }
    const b = this.bytes;
    b[this.used] = n >>> 8;
    b[this.used + 1] = n & 0xff;
    b.set(encoded, this.used + 2);
    this.used = end;
    this.count++;
  }

  /** Bytes held (for figures and tests). */
  get byteLength(): number {
    return this.bytes.byteLength;
  }

  /** Each appended key decoded, in the order appended (repeats included). */
  *keys(): Generator<Key> {
    const b = this.bytes;
    for (let at = 0; at < this.used; ) {
      const n = (b[at]! << 8) | b[at + 1]!;
      yield decodeValue(b.subarray(at + 2, at + 2 + n)) as Key;
      at += 2 + n;
    }
  }
}

/** Filter bits per expected key: with three probes, ~1.5% false positives at the expected count. */
const FILTER_BITS_PER_KEY = 10;
/** Keys the first epoch's filter expects; later epochs expect twice the epoch before. */
const FILTER_KEYS_MIN = 1024;

/** The murmur3 finaliser: every input bit affects every output bit. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The Bloom filter's base hash of a key in a slot: FNV-1a over its bytes, mixed with the slot. */
function keyHash(slot: number, bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return fmix(h ^ Math.imul(slot + 1, 0x9e3779b1));
}

/** The changed keys of one epoch, by slot (one slot per state and key group, see `changeSlot`). */
export class ChangeSet {
  private readonly logs = new Map<number, KeyLog>();
  private readonly filter: Int32Array;
  private readonly mask: number;
  /** Keys recorded (repeats included). */
  keys = 0;

  constructor(expectedKeys: number) {
    let bits = 1024;
    while (bits < expectedKeys * FILTER_BITS_PER_KEY && bits < 2 ** 30) bits *= 2;
    this.filter = new Int32Array(bits >>> 5);
    this.mask = bits - 1;
  }

  record(slot: number, encoded: Uint8Array): void {
    let log = this.logs.get(slot);
    if (log === undefined) this.logs.set(slot, (log = new KeyLog()));
    log.add(encoded);
    this.keys++;
    const h = keyHash(slot, encoded);
    const step = fmix(h ^ 0x5bd1e995) | 1;
    for (let i = 0, b = h; i < 3; i++, b = (b + step) >>> 0) {
      const bit = b & this.mask;
      this.filter[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** Whether the key with these encoded bytes may have been recorded in `slot` (never false when it was). */
  mayHold(slot: number, encoded: Uint8Array): boolean {
    if (!this.logs.has(slot)) return false;
    const h = keyHash(slot, encoded);
    const step = fmix(h ^ 0x5bd1e995) | 1;
    for (let i = 0, b = h; i < 3; i++, b = (b + step) >>> 0) {
      const bit = b & this.mask;
      if ((this.filter[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** The keys recorded in `slot`, or undefined when none were. */
  get(slot: number): KeyLog | undefined {
    return this.logs.get(slot);
  }

  /** The slots with recorded keys. */
  slots(): IterableIterator<number> {
    return this.logs.keys();
  }

  /** Every slot's log. */
  values(): IterableIterator<KeyLog> {
    return this.logs.values();
  }
}

interface Epoch {
  readonly checkpointId: number;
  readonly changes: ChangeSet;
}

/** What a snapshot's sync phase learns: every unconfirmed change, or that changes were lost. */
export type ClosedChanges = { readonly complete: true; readonly changes: readonly ChangeSet[]; readonly keys: number } | { readonly complete: false };

/** Changed keys per epoch since the last completed checkpoint. */
export class ChangeTracker {
  private current = new ChangeSet(FILTER_KEYS_MIN);
  private closed: Epoch[] = [];
  private trackedKeys = 0;
  /** Set when tracking gave up; cleared by the next sync phase, which must write a base. */
  private lost = false;
  /** Deltas may extend only completed checkpoints at or after this one (the first base after changes were lost). */
  private floor = -1;

  constructor(public trackedKeysMax: number) {}

  /** Whether changes are being tracked now (false once it gave up, until the next sync phase). */
  get tracking(): boolean {
    return !this.lost;
  }

  /**
   * Records that the key whose encoded bytes are `encoded` changed in `slot`. The caller records a
   * key once per epoch while it stays cached; the bytes are copied.
   */
  record(slot: number, encoded: Uint8Array): void {
    if (this.lost) return;
    this.current.record(slot, encoded);
    if (++this.trackedKeys > this.trackedKeysMax) this.giveUp();
  }

  private giveUp(): void {
    this.lost = true;
    this.current = new ChangeSet(FILTER_KEYS_MIN);
    this.closed = [];
    this.trackedKeys = 0;
  }

  /**
   * The sync phase of snapshot `checkpointId`: closes the open epoch and returns every change not
   * yet confirmed, oldest first, or `complete: false` when changes were lost (write a base).
   */
  close(checkpointId: number): ClosedChanges {
    if (this.lost) {
      this.lost = false;
      this.floor = checkpointId;
      return { complete: false };
    }
    const closing = this.current;
    this.closed.push({ checkpointId, changes: closing });
    this.current = new ChangeSet(Math.min(this.trackedKeysMax, Math.max(FILTER_KEYS_MIN, 2 * closing.keys)));
    let keys = 0;
    for (const e of this.closed) keys += e.changes.keys;
    return { complete: true, changes: this.closed.map((e) => e.changes), keys };
  }

  /** Whether a delta may extend completed checkpoint `checkpointId` (no changes since it were lost). */
  canExtend(checkpointId: number): boolean {
    return !this.lost && checkpointId >= this.floor;
  }

  /** Checkpoint `checkpointId` completed and is now the base of deltas: its changes are persisted. */
  confirm(checkpointId: number): void {
    const kept = this.closed.filter((e) => e.checkpointId > checkpointId);
    for (const e of this.closed) if (e.checkpointId <= checkpointId) this.trackedKeys -= e.changes.keys;
    this.closed = kept;
  }

  /** Keys tracked now (an upper bound: a key changed in two epochs, or evicted and changed again in one, counts twice). */
  get size(): number {
    return this.trackedKeys;
  }
}
