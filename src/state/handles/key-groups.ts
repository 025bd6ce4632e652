/**
 * The full keyed handle: the state of one key-group range in one stream (a full snapshot, and every
 * savepoint), exclusive to the checkpoint that wrote it.
 */
import { streamSize, type StreamStateHandle } from '../../storage/handles.ts';
import { inspectKeyedFile } from '../formats/keyed-file-inspect.ts';
import { applyKeyedFiles } from '../formats/keyed-file-reader.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import type { KeyedHandleKind } from './kind.ts';
import { readKeyCounts, readOffsets, readRange, writeKeyCounts, writeOffsets, writeRange } from './metadata-fields.ts';

/** Keyed state of one key-group range in one stream (a full snapshot), with where each key group starts inside it. */
export interface KeyGroupsStateHandle {
  readonly type: 'key-groups';
  readonly range: KeyGroupRange;
  /** [keyGroup, offset, length] for each key group that holds data, ascending by key group. */
  readonly offsets: ReadonlyArray<readonly [number, number, number]>;
  readonly stream: StreamStateHandle;
  /** Number of keys per state name, for inspection and figures. */
  readonly keyCounts: Readonly<Record<string, number>>;
}

/** The descriptor of full keyed handles. */
export const keyGroupsHandleKind: KeyedHandleKind<KeyGroupsStateHandle> = {
  type: 'key-groups',
  streams: (handle) => [handle.stream],
  sizes(handle) {
    const size = streamSize(handle.stream);
    return { persistedBytes: size, stateBytes: size };
  },
  reusesFilesFrom: () => Infinity,
  // Format 1: { range: [start, end], offsets: [[kg, off, len]], stream, keyCounts: [[name, n]] }, no type field.
  metadata: {
    tag: undefined,
    write: (handle, writeStream) => ({
      range: writeRange(handle.range),
      offsets: writeOffsets(handle.offsets),
      stream: writeStream(handle.stream),
      keyCounts: writeKeyCounts(handle.keyCounts),
    }),
    read: (c, o, at, readStream) => ({
      type: 'key-groups',
      range: readRange(c, o.range, `${at}.range`),
      offsets: readOffsets(c, o.offsets, `${at}.offsets`),
      stream: readStream(o.stream, `${at}.stream`),
      keyCounts: readKeyCounts(c, o.keyCounts, `${at}.keyCounts`),
    }),
  },
  inspect: (handle, read) => inspectKeyedFile(handle.stream, handle.offsets, read),
  restore: (handle, target) => applyKeyedFiles([{ layout: 'full', offsets: handle.offsets, stream: handle.stream }], handle.range, target),
};
