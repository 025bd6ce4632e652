/**
 * Reading a snapshot wherever it is, whatever storage the job checkpoints to: a job on a directory
 * (or in memory) restores from a savepoint in S3, and its task managers read that savepoint's
 * state objects. A path that is a URL (`s3://...`) is read with its scheme's snapshot tools, which
 * `location.ts` registers here; any other path from the file system. Kept apart from `location.ts`
 * so the storages can use it without importing the registry that imports them.
 */
import { StorageError } from '../core/errors.ts';
import type { StreamStateHandle } from './handles.ts';
import { isUrlPath } from './paths.ts';
import { FS_SNAPSHOT_TOOLS, type SnapshotTools } from './snapshot-tools.ts';
import type { SnapshotReader } from './storage.ts';

const factories = new Map<string, () => SnapshotTools>();
const opened = new Map<string, SnapshotTools>();

/** Lets every storage read snapshots at `scheme://` URLs with the tools `make` opens (once per process). */
export function registerUrlSnapshotTools(scheme: string, make: () => SnapshotTools): void {
  factories.set(scheme.toLowerCase(), make);
  opened.delete(scheme.toLowerCase());
}

/** The tools that read `p`: its URL scheme's, or the file system's. */
export function snapshotToolsOfPath(p: string): SnapshotTools {
  if (!isUrlPath(p)) return FS_SNAPSHOT_TOOLS;
  const scheme = p.slice(0, p.indexOf(':')).toLowerCase();
  const known = opened.get(scheme);
  if (known !== undefined) return known;
  const make = factories.get(scheme);
  if (make === undefined) throw new StorageError('MISSING_FILE', p, `no storage reads ${scheme}: URLs in this process`);
  const tools = make();
  opened.set(scheme, tools);
  return tools;
}

/** A SnapshotReader (and state reader) over every registered scheme and the file system. */
export const anySnapshotReader: SnapshotReader & { readState(handle: StreamStateHandle): Promise<Uint8Array> } = {
  probe: (p) => snapshotToolsOfPath(p).reader.probe(p),
  readMetadataBytes: (location) => snapshotToolsOfPath(location).reader.readMetadataBytes(location),
  dirSizeBytes: (location) => snapshotToolsOfPath(location).reader.dirSizeBytes(location),
  checkStateFile: (handle) => snapshotToolsOfPath(handle.path).reader.checkStateFile(handle),
  readRestoredFrom: (jobDir) => snapshotToolsOfPath(jobDir).reader.readRestoredFrom(jobDir),
  readState: (handle) => (handle.type === 'inline' ? FS_SNAPSHOT_TOOLS.readState(handle) : snapshotToolsOfPath(handle.path).readState(handle)),
};
