/**
 * Reading, listing and deleting snapshots where no job runs (the CLI's `weir checkpoints`,
 * `weir savepoint inspect|dispose`): one set of tools per storage scheme, chosen by the location's
 * scheme in `location.ts`. The file system's are here; other schemes bring theirs with their entry.
 */
import { promises as fsp } from 'node:fs';
import { type SnapshotDirLister, fsDirLister, fsSnapshotReader } from './fs-inspect.ts';
import { readStateFs } from './fs-io.ts';
import type { StreamStateHandle } from './handles.ts';
import type { SnapshotReader } from './storage.ts';

export interface SnapshotTools {
  readonly reader: SnapshotReader;
  readonly lister: SnapshotDirLister;
  /** Reads and verifies one state stream (a file handle of this storage, or inline bytes). */
  readState(handle: StreamStateHandle): Promise<Uint8Array>;
  /** Deletes a snapshot directory and everything in it. */
  removeDir(dir: string): Promise<void>;
}

export const FS_SNAPSHOT_TOOLS: SnapshotTools = {
  reader: fsSnapshotReader,
  lister: fsDirLister,
  readState: readStateFs,
  removeDir: (dir) => fsp.rm(dir, { recursive: true }),
};
