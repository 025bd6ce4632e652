/**
 * The heap keyed backend's snapshot stream (format version 1): after the header, one msgpack
 * section per key group that holds data, `[keyGroup, {stateName: [kind, [[key, value], ...]]}]`,
 * ascending by key group. Map-state values are stored as arrays of [mapKey, value] pairs. The
 * handle's offsets let a restore at any parallelism decode only the key groups it owns.
 */
import { RestoreError, StorageError } from '../../core/errors.ts';
import { encodeValue, decodeValue } from '../codec.ts';
import type { StateKind } from '../descriptors.ts';
import { assignToKeyGroup, type Key } from '../key-groups.ts';
import { assembleStream, KEYED_STREAM_VERSION, sectionBytes } from './stream-format.ts';
import type { GroupMap, StateTable } from '../heap/state-table.ts';

export interface CapturedTable {
  readonly table: StateTable;
  readonly groups: ReadonlyArray<GroupMap | undefined>;
}

export interface EncodedKeyedStream {
  readonly bytes: Uint8Array;
  readonly offsets: Array<readonly [number, number, number]>;
  readonly keyCounts: Record<string, number>;
}

export const STATE_KINDS: readonly StateKind[] = ['value', 'list', 'map', 'reducing', 'aggregating'];

function toStored(kind: StateKind, value: unknown): unknown {
  return kind === 'map' ? Array.from(value as Map<unknown, unknown>) : value;
}

/** Encodes the captured tables key group by key group; null when no key has a value. */
export function encodeKeyedStream(captured: readonly CapturedTable[], rangeStart: number): EncodedKeyedStream | null {
  const sections: Uint8Array[] = [];
  const keyGroups: number[] = [];
  const keyCounts: Record<string, number> = {};
  for (const { table } of captured) keyCounts[table.name] = 0;
  const groupCount = captured.length === 0 ? 0 : captured[0]!.groups.length;
  for (let index = 0; index < groupCount; index++) {
    let section: Record<string, [StateKind, Array<[Key, unknown]>]> | null = null;
    for (const { table, groups } of captured) {
      const map = groups[index];
      if (map === undefined || map.size === 0) continue;
      const entries: Array<[Key, unknown]> = [];
      for (const [key, value] of map) entries.push([key, toStored(table.kind, value)]);
      section ??= {};
      section[table.name] = [table.kind, entries];
      keyCounts[table.name] = keyCounts[table.name]! + entries.length;
    }
    if (section === null) continue;
    sections.push(encodeValue([rangeStart + index, section]));
    keyGroups.push(rangeStart + index);
  }
  if (sections.length === 0) return null;
  const { bytes, starts } = assembleStream('keyed', KEYED_STREAM_VERSION, sections);
  const offsets = keyGroups.map((kg, i) => [kg, starts[i]!, sections[i]!.byteLength] as const);
  return { bytes, offsets, keyCounts };
}

export interface DecodedState {
  readonly name: string;
  readonly kind: StateKind;
  /** Values in working form (map state as `Map`). */
  readonly entries: Array<[Key, unknown]>;
}

function isKey(value: unknown): value is Key {
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'bigint' || t === 'boolean';
}

/** A decoded key-group section: its body by state name, and the checks every reader of it makes. */
export interface KeyedSection {
  readonly body: Record<string, unknown>;
  /** A StorageError naming the stream and key group. */
  readonly corrupt: (what: string) => StorageError;
  /** The key, after checking it is a key and belongs to this key group at maxParallelism (RestoreError otherwise). */
  readonly checkKey: (state: string, key: unknown) => Key;
}

/** Decodes a key group's section of a keyed stream (full or delta) and checks its header. */
export function openKeyedSection(
  stream: Uint8Array,
  keyGroup: number,
  offset: number,
  length: number,
  maxParallelism: number,
  streamLabel: string,
): KeyedSection {
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
  const checkKey = (state: string, key: unknown): Key => {
    if (!isKey(key)) throw corrupt(`state "${state}" has a malformed key`);
    const actual = assignToKeyGroup(key, maxParallelism);
    if (actual !== keyGroup) {
      throw new RestoreError(
        `${streamLabel}: state "${state}": key ${String(key)} was stored in key group ${keyGroup} but belongs to ${actual} at maxParallelism ${maxParallelism}; was the snapshot taken with another maxParallelism?`,
      );
    }
    return key;
  };
  return { body: decoded[1] as Record<string, unknown>, corrupt, checkKey };
}

/**
 * Decodes and checks the section of key group `keyGroup`: its shape and kinds (StorageError) and
 * that every key really hashes to that key group at `maxParallelism` (RestoreError: the snapshot
 * was most likely written with another maxParallelism).
 */
export function decodeKeyedSection(
  stream: Uint8Array,
  keyGroup: number,
  offset: number,
  length: number,
  maxParallelism: number,
  streamLabel: string,
): DecodedState[] {
  const { body, corrupt, checkKey } = openKeyedSection(stream, keyGroup, offset, length, maxParallelism, streamLabel);
  const states: DecodedState[] = [];
  for (const [name, stored] of Object.entries(body)) {
    if (!Array.isArray(stored) || stored.length !== 2 || !STATE_KINDS.includes(stored[0]) || !Array.isArray(stored[1])) {
      throw corrupt(`state "${name}" is malformed`);
    }
    const kind = stored[0] as StateKind;
    const entries: Array<[Key, unknown]> = [];
    for (const entry of stored[1] as unknown[]) {
      if (!Array.isArray(entry) || entry.length !== 2 || !isKey(entry[0])) throw corrupt(`state "${name}" has a malformed entry`);
      entries.push([checkKey(name, entry[0]), toWorkingValue(kind, entry[1], corrupt, name)]);
    }
    states.push({ name, kind, entries });
  }
  return states;
}

/** Stored form to working form (map state as `Map`); shared by every reader of keyed state. */
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
