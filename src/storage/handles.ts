/**
 * State handles: references to persisted state returned by snapshots and recorded in checkpoint
 * metadata. At run time `path` is absolute (or a `memory:` key); the metadata serializer stores it
 * relative to the directory holding `_metadata`, so a snapshot directory can be moved. Keyed state
 * handles, which carry key-group ranges, are in `state/handles/`, one module per kind.
 */

/** A whole persisted byte stream: a file, or bytes kept inline in the metadata. */
export type StreamStateHandle =
  | { readonly type: 'file'; readonly path: string; readonly size: number; readonly checksum: number }
  | { readonly type: 'inline'; readonly data: Uint8Array; readonly checksum: number };

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
