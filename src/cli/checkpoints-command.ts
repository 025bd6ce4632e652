/** `weir checkpoints <dir>`: lists the snapshots under a checkpoint or savepoint directory. */
import { resolveStorageLocation, snapshotToolsFor } from '../storage/location.ts';
import { listCheckpointsIn, type StoredSnapshotListing } from '../checkpoint/restore/snapshot-listing.ts';
import { EXIT_OK } from './exit.ts';
import { humanBytes, isoTime, oneLine, renderTable } from './format.ts';

export interface CheckpointsFlags {
  readonly json?: boolean;
}

export async function checkpointsCommand(given: string, flags: CheckpointsFlags): Promise<number> {
  const dir = resolveStorageLocation(given, 'checkpoints <dir>');
  const listings = await listCheckpointsIn(dir, snapshotToolsFor(dir, 'checkpoints <dir>'));
  process.stdout.write(flags.json ? `${JSON.stringify(listings.map(toJson), null, 2)}\n` : formatListings(dir, listings));
  return EXIT_OK;
}

function toJson(l: StoredSnapshotListing): Record<string, unknown> {
  return {
    jobId: l.jobId,
    checkpointId: l.checkpointId,
    kind: l.kind,
    status: l.status,
    time: l.timestampMs === null ? null : isoTime(l.timestampMs),
    timestampMs: l.timestampMs,
    sizeBytes: l.sizeBytes,
    type: l.summary?.type ?? null,
    persistedBytes: l.summary?.persistedBytes ?? null,
    stateBytes: l.summary?.stateBytes ?? null,
    inflightBytes: l.summary?.channelStateBytes ?? null,
    handleKinds: l.handleKinds ?? null,
    location: l.location,
    ...(l.error !== undefined ? { error: l.error } : {}),
  };
}

export function formatListings(dir: string, listings: readonly StoredSnapshotListing[]): string {
  if (listings.length === 0) return `no checkpoints or savepoints in ${dir}\n`;
  const rows = listings.map((l) => [
    l.jobId ?? '-',
    String(l.checkpointId),
    isoTime(l.timestampMs),
    humanBytes(l.sizeBytes),
    l.kind,
    l.summary?.type ?? '-',
    l.summary ? humanBytes(l.summary.persistedBytes) : '-',
    l.summary ? humanBytes(l.summary.stateBytes) : '-',
    l.summary ? humanBytes(l.summary.channelStateBytes) : '-',
    l.handleKinds === undefined || l.handleKinds.length === 0 ? '-' : l.handleKinds.join(','),
    l.status === 'corrupt' && l.error ? `corrupt: ${oneLine(l.error)}` : l.status,
  ]);
  // SIZE: files on disk for it; PERSISTED: bytes this checkpoint wrote; STATE: the full state it restores;
  // IN-FLIGHT: buffers an unaligned checkpoint persisted; HANDLES: kinds of its keyed state handles.
  return renderTable(['JOB', 'CHECKPOINT', 'TIME', 'SIZE', 'KIND', 'TYPE', 'PERSISTED', 'STATE', 'IN-FLIGHT', 'HANDLES', 'STATUS'], rows);
}
