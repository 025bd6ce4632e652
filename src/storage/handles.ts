/**
 * State handles: references to persisted state returned by snapshots and recorded in checkpoint
 * metadata. At run time `path` is absolute (or a `memory:` key); the metadata serializer stores it
 * relative to the directory holding `_metadata`, so a snapshot directory can be moved. Keyed state
 * handles, which carry key-group ranges, are in `state/handles/`, one module per kind.
 */

/**
 * A persisted byte stream: a whole file, bytes kept inline in the metadata, or a byte range of a
 * file that several handles share (the changelog's shared log files). A range's `offset` counts
 * from the start of the file's body (after its envelope header); its `checksum` covers the range.
 */
export type StreamStateHandle =
  | { readonly type: 'file'; readonly path: string; readonly size: number; readonly checksum: number }
  | { readonly type: 'inline'; readonly data: Uint8Array; readonly checksum: number }
  | FileRangeHandle;

/** A byte range of a state file's body. */
export interface FileRangeHandle {
  readonly type: 'range';
  readonly path: string;
  readonly offset: number;
  readonly length: number;
  readonly checksum: number;
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
  return handle.type === 'file' ? handle.size : handle.type === 'range' ? handle.length : handle.data.byteLength;
}

/** The file a stream lives in (whole or a range of it); null for inline state. */
export function streamFile(handle: StreamStateHandle): string | null {
  return handle.type === 'inline' ? null : handle.path;
}

/** How errors name a range within its file: the body bytes it covers. */
export function rangeLabel(handle: FileRangeHandle): string {
  return `body bytes ${handle.offset} to ${handle.offset + handle.length}`;
}
