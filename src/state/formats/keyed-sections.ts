import type { StateKind } from '../descriptors.ts';
import type { Key } from '../key-groups.ts';
import { openKeyedSection, STATE_KINDS, toWorkingValue } from './keyed-stream.ts';
import { assembleStream, KEYED_STREAM_VERSION, streamParts } from './stream-format.ts';
import { ByteSink } from '../incremental/byte-sink.ts';

/** Version 2 of the keyed stream: sections with deletions. Version 1 is the full layout. */
export const KEYED_DELTA_STREAM_VERSION = 2;

export type SectionLayout = 'full' | 'delta';

export const STREAM_VERSION_OF: Readonly<Record<SectionLayout, number>> = { full: KEYED_STREAM_VERSION, delta: KEYED_DELTA_STREAM_VERSION };

/** One state's data in one key group, as encoded pieces. */
export interface RawStateSection {
  readonly name: string;
  readonly kind: StateKind;
  /** [encoded key, encoded stored value], or the same already encoded one after another. */
  readonly entries: Array<readonly [Uint8Array, Uint8Array]> | PackedEntries;
  /** Encoded keys that were deleted (delta layout only). */
  readonly removed: Uint8Array[];
}

/**
 * A state section's entries encoded as they come, one after another, instead of held as pairs of
 * buffers until the section is encoded: a full snapshot of a large store builds a key group's
 * section across many pauses, and pairs held that long outlive V8's young generation, so every
 * snapshot left its whole state as old-generation garbage (BENCHMARKS.md, state (g)).
 */
export class PackedEntries {
  private readonly sink = new ByteSink();
  length = 0;

  add(key: Uint8Array, value: Uint8Array): void {
    this.sink.arrayHeader(2);
    this.sink.raw(key);
    this.sink.raw(value);
    this.length++;
  }

  /**
   * An entry whose encoded key is `keySource` from byte `keyStart` to its end (a store key past its
   * prefix) and whose encoded value is the first `valueLength` bytes of `value`.
   */
  addFrom(keySource: Uint8Array, keyStart: number, value: Uint8Array, valueLength: number): void {
    this.sink.arrayHeader(2);
    this.sink.rawRange(keySource, keyStart, keySource.byteLength);
    this.sink.rawRange(value, 0, valueLength);
    this.length++;
  }

  /** The encoded entries, valid until the next `add` or `clear`. */
  encoded(): Uint8Array {
    return this.sink.written();
  }

  /** Empties it for the next section, keeping its buffer. */
  clear(): void {
    this.sink.clear();
    this.length = 0;
  }
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
    if (s.entries instanceof PackedEntries) {
      out.raw(s.entries.encoded());
    } else {
      for (const [key, value] of s.entries) {
        out.arrayHeader(2);
        out.raw(key);
        out.raw(value);
      }
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

  /** The stream `finish` gives, as parts not joined (see `streamParts`). */
  finishParts(): { parts: Uint8Array[]; offsets: Array<readonly [number, number, number]> } {
    const { parts, starts } = streamParts('keyed', STREAM_VERSION_OF[this.layout], this.sections);
    return { parts, offsets: this.keyGroups.map((kg, i) => [kg, starts[i]!, this.sections[i]!.byteLength] as const) };
  }
}

// ---- reading the delta layout ----

export interface DecodedDeltaState {
  readonly name: string;
  readonly kind: StateKind;
  /** Values in working form (map state as `Map`). */
  readonly entries: Array<[Key, unknown]>;
  readonly removed: Key[];
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
  const { body, corrupt, checkKey } = openKeyedSection(stream, keyGroup, offset, length, maxParallelism, streamLabel);
  const states: DecodedDeltaState[] = [];
  for (const [name, stored] of Object.entries(body)) {
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
