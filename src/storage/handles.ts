/**
 * State handles: references to persisted state returned by snapshots and recorded in checkpoint
 * metadata. At run time `path` is absolute (or a `memory:` key); the metadata serializer stores it
 * relative to the directory holding `_metadata`, so a snapshot directory can be moved.
 */
import type { KeyGroupRange } from '../state/key-groups.ts';

/** A whole persisted byte stream: a file, or bytes kept inline in the metadata. */
export type StreamStateHandle =
  | { readonly type: 'file'; readonly path: string; readonly size: number; readonly checksum: number }
  | { readonly type: 'inline'; readonly data: Uint8Array; readonly checksum: number };

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

// ---- incremental keyed state ----

/** Keyed state of one key-group range as recorded in a checkpoint: one full stream, or a chain of shared files. */
export type KeyedStateHandle = KeyGroupsStateHandle | IncrementalKeyGroupsStateHandle;

/** One immutable file of an incremental chain: a full base, or the changes (with deletions) since the previous file. */
export interface IncrementalStateFile {
  readonly kind: 'base' | 'delta';
  /** The checkpoint whose snapshot wrote the file. */
  readonly checkpointId: number;
  /** [keyGroup, offset, length] for each key group the file holds, ascending by key group. */
  readonly offsets: ReadonlyArray<readonly [number, number, number]>;
  readonly stream: StreamStateHandle;
}

/**
 * Keyed state of one key-group range as a chain of shared files: a base, then increments, oldest
 * first. Restore applies them in order (an increment's deletions remove keys). Files written by
 * this handle's own checkpoint are new; the others are reused from earlier checkpoints.
 */
export interface IncrementalKeyGroupsStateHandle {
  readonly type: 'incremental-key-groups';
  readonly range: KeyGroupRange;
  /** The checkpoint whose snapshot made this handle. */
  readonly checkpointId: number;
  /**
   * The newest completed checkpoint the backend knew of at the sync phase (null: none). Its later
   * chains reuse only files of that or newer checkpoints, which tells the coordinator when a
   * released file can no longer be reused and may be deleted.
   */
  readonly knownCompletedCheckpointId: number | null;
  readonly files: readonly IncrementalStateFile[];
  /** Number of keys per state name after applying the whole chain. */
  readonly keyCounts: Readonly<Record<string, number>>;
}

/** Every stream a keyed handle refers to, in restore order. */
export function keyedStreamsOf(handle: KeyedStateHandle): StreamStateHandle[] {
  return handle.type === 'key-groups' ? [handle.stream] : handle.files.map((f) => f.stream);
}

/**
 * The figures of one keyed handle for the checkpoint ack: bytes its checkpoint wrote (new files
 * only) and bytes of everything it refers to (the full state a restore reads).
 */
export function keyedHandleSizes(handle: KeyedStateHandle): { readonly persistedBytes: number; readonly stateBytes: number } {
  if (handle.type === 'key-groups') {
    const size = streamSize(handle.stream);
    return { persistedBytes: size, stateBytes: size };
  }
  let persistedBytes = 0;
  let stateBytes = 0;
  for (const f of handle.files) {
    const size = streamSize(f.stream);
    stateBytes += size;
    if (f.checkpointId === handle.checkpointId) persistedBytes += size;
  }
  return { persistedBytes, stateBytes };
}

/** How operator (non-keyed) list state is redistributed on rescale. */
export type OperatorStateMode = 'split' | 'union';

export interface OperatorStateEntry {
  readonly name: string;
  readonly mode: OperatorStateMode;
  readonly count: number;
}

/** The operator (non-keyed) state of one subtask of one operator. */
export interface OperatorStateHandle {
  readonly type: 'operator';
  readonly states: readonly OperatorStateEntry[];
  readonly stream: StreamStateHandle;
}

export function streamSize(handle: StreamStateHandle): number {
  return handle.type === 'file' ? handle.size : handle.data.byteLength;
}
