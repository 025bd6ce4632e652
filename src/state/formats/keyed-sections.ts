/**
 * Keyed snapshot streams written from already-encoded keys and values, in two layouts under the
 * 'keyed' stream header:
 *
 *   version 1 (full; the heap backend's layout, see heap/keyed-stream.ts), one section per key group:
 *     [keyGroup, {stateName: [kind, [[key, value], ...]]}]
 *   version 2 (delta: the changes since the previous file of an incremental chain):
 *     [keyGroup, {stateName: [kind, [[key, value], ...], [removedKey, ...]]}]
 *
 * Sections ascend by key group and the handle records each one's offset, so a restore at any
 * parallelism decodes only the key groups it owns. Values are stored as the codec encodes them
 * (map state as an array of [mapKey, value] pairs).
 */
import { RestoreError, StorageError } from '../../core/errors.ts';
import { decodeValue } from '../codec.ts';
import type { StateKind } from '../descriptors.ts';
import { assignToKeyGroup, type Key } from '../key-groups.ts';
import { assembleStream, KEYED_STREAM_VERSION, sectionBytes } from './stream-format.ts';
import { ByteSink } from '../incremental/byte-sink.ts';

/** Version 2 of the keyed stream: sections with deletions. Version 1 is the full layout. */
export const KEYED_DELTA_STREAM_VERSION = 2;

export type SectionLayout = 'full' | 'delta';

export const STREAM_VERSION_OF: Readonly<Record<SectionLayout, number>> = { full: KEYED_STREAM_VERSION, delta: KEYED_DELTA_STREAM_VERSION };

/** One state's data in one key group, as encoded pieces. */
export interface RawStateSection {
  readonly name: string;
  readonly kind: StateKind;
  /** [encoded key, encoded stored value] */
  readonly entries: Array<readonly [Uint8Array, Uint8Array]>;
  /** Encoded keys that were deleted (delta layout only). */
  readonly removed: Uint8Array[];
}

/** Encodes one key group's section. */
export function encodeRawSection(layout: SectionLayout, keyGroup: number, states: readonly RawStateSection[]): Uint8Array {
  const out = new ByteSink();
  out.arrayHeader(2);
  out.value(keyGroup);
  out.mapHeader(states.length);
  for (const s of states) {
    out.value(s.name);
    out.arrayHeader(layout === 'full' ? 2 : 3);
    out.value(s.kind);
    out.arrayHeader(s.entries.length);
    for (const [key, value] of s.entries) {
      out.arrayHeader(2);
      out.raw(key);
      out.raw(value);
    }
    if (layout === 'delta') {
      out.arrayHeader(s.removed.length);
      for (const key of s.removed) out.raw(key);
    }
  }
  return out.take();
}

/** Collects the sections of one stream, ascending by key group. */
export class KeyedStreamBuilder {
  private readonly sections: Uint8Array[] = [];
  private readonly keyGroups: number[] = [];
  /** Entries written per state name (keys with a value; deletions not counted). */
  readonly keyCounts: Record<string, number> = {};

  constructor(readonly layout: SectionLayout) {}

  get isEmpty(): boolean {
    return this.sections.length === 0;
  }

  add(keyGroup: number, states: readonly RawStateSection[]): void {
    if (states.length === 0) return;
    const last = this.keyGroups[this.keyGroups.length - 1];
    if (last !== undefined && keyGroup <= last) throw new Error(`keyed stream sections out of order: ${keyGroup} after ${last}`);
    for (const s of states) {
      Object.defineProperty(this.keyCounts, s.name, {
        value: (this.keyCounts[s.name] ?? 0) + s.entries.length,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    this.sections.push(encodeRawSection(this.layout, keyGroup, states));
    this.keyGroups.push(keyGroup);
  }

  finish(): { bytes: Uint8Array; offsets: Array<readonly [number, number, number]> } {
    const { bytes, starts } = assembleStream('keyed', STREAM_VERSION_OF[this.layout], this.sections);
    return { bytes, offsets: this.keyGroups.map((kg, i) => [kg, starts[i]!, this.sections[i]!.byteLength] as const) };
  }
}

// ---- reading the delta layout ----

const STATE_KINDS: readonly StateKind[] = ['value', 'list', 'map', 'reducing', 'aggregating'];

export interface DecodedDeltaState {
  readonly name: string;
  readonly kind: StateKind;
  /** Values in working form (map state as `Map`). */
  readonly entries: Array<[Key, unknown]>;
  readonly removed: Key[];
}

function isKey(value: unknown): value is Key {
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'bigint' || t === 'boolean';
}

/** Stored form to working form; shared by every reader of keyed streams. */
export function toWorkingValue(kind: StateKind, stored: unknown, corrupt: (what: string) => StorageError, name: string): unknown {
  if (kind === 'list') {
    if (!Array.isArray(stored)) throw corrupt(`list state "${name}" holds a non-array`);
    return stored;
  }
  if (kind === 'map') {
    if (!Array.isArray(stored) || !stored.every((p) => Array.isArray(p) && p.length === 2)) throw corrupt(`map state "${name}" holds a malformed map`);
    return new Map(stored as Array<[string | number, unknown]>);
  }
  return stored;
}

/**
 * Decodes and checks the delta section of key group `keyGroup`: its shape (StorageError) and that
 * every key, written or removed, belongs to that key group at `maxParallelism` (RestoreError).
 */
export function decodeDeltaSection(
  stream: Uint8Array,
  keyGroup: number,
  offset: number,
  length: number,
  maxParallelism: number,
  streamLabel: string,
): DecodedDeltaState[] {
  const corrupt = (what: string): StorageError => new StorageError('CORRUPT_FILE', streamLabel, `key group ${keyGroup}: ${what}`);
  let decoded: unknown;
  try {
    decoded = decodeValue(sectionBytes(stream, offset, length, streamLabel));
  } catch (err) {
    if (err instanceof StorageError) throw err;
    throw new StorageError('CORRUPT_FILE', streamLabel, `key group ${keyGroup}: undecodable section`, { cause: err });
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 2 ||
    decoded[0] !== keyGroup ||
    typeof decoded[1] !== 'object' ||
    decoded[1] === null ||
    Array.isArray(decoded[1])
  ) {
    throw corrupt('section header does not match the offsets');
  }
  const checkKey = (name: string, key: unknown): Key => {
    if (!isKey(key)) throw corrupt(`state "${name}" has a malformed key`);
    const actual = assignToKeyGroup(key, maxParallelism);
    if (actual !== keyGroup) {
      throw new RestoreError(
        `${streamLabel}: state "${name}": key ${String(key)} was stored in key group ${keyGroup} but belongs to ${actual} at maxParallelism ${maxParallelism}; was the snapshot taken with another maxParallelism?`,
      );
    }
    return key;
  };
  const states: DecodedDeltaState[] = [];
  for (const [name, stored] of Object.entries(decoded[1] as Record<string, unknown>)) {
    if (!Array.isArray(stored) || stored.length !== 3 || !STATE_KINDS.includes(stored[0]) || !Array.isArray(stored[1]) || !Array.isArray(stored[2])) {
      throw corrupt(`state "${name}" is malformed`);
    }
    const kind = stored[0] as StateKind;
    const entries: Array<[Key, unknown]> = [];
    for (const entry of stored[1] as unknown[]) {
      if (!Array.isArray(entry) || entry.length !== 2) throw corrupt(`state "${name}" has a malformed entry`);
      entries.push([checkKey(name, entry[0]), toWorkingValue(kind, entry[1], corrupt, name)]);
    }
    const removed = (stored[2] as unknown[]).map((k) => checkKey(name, k));
    states.push({ name, kind, entries, removed });
  }
  return states;
}
