/**
 * Where one savepoint is written: its own self-contained directory (or, in memory, its own key
 * prefix). The coordinator routes a savepoint's state files and metadata here instead of to the
 * job's checkpoint storage.
 */
import type { CheckpointId } from '../core/ids.ts';
import type { CheckpointStreamFactory } from './storage.ts';

export interface SavepointTarget {
  /** The savepoint's directory (or memory key); file paths in its `_metadata` are relative to it. */
  readonly location: string;
  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory;
  /** Writes `bytes` as the savepoint's `_metadata` atomically; returns the location. */
  commitMetadata(bytes: Uint8Array): Promise<string>;
  /** Removes what an unfinished savepoint wrote (a savepoint that completed is never deleted by the engine). */
  discardIncomplete(): Promise<void>;
}
