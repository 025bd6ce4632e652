/**
 * Corruption at rest: a file of a completed checkpoint rots on the disk (truncated, or one byte
 * flipped) long after it was written and verified. Only the newest completed checkpoint is hit,
 * and only while an older one is on the disk too, so recovery has something to fall back to.
 */
import type { CheckpointId } from '../../core/ids.ts';
import { baseName, checkpointDir, metadataPath, METADATA_FILE_NAME, parentDir, parseCheckpointDirName, parseSavepointDirName } from '../../storage/paths.ts';
import type { CorruptionPlan } from '../knobs.ts';

export interface Corrupted {
  readonly checkpointId: number;
  readonly file: string;
  readonly dir: string;
}

/** Completed checkpoint ids of the job on the disk, ascending. */
export function completedOnDisk(files: ReadonlyMap<string, Uint8Array>, jobDir: string): CheckpointId[] {
  const ids: CheckpointId[] = [];
  for (const file of files.keys()) {
    if (baseName(file) !== METADATA_FILE_NAME || parentDir(parentDir(file)) !== jobDir) continue;
    const id = parseCheckpointDirName(baseName(parentDir(file)));
    if (id !== null) ids.push(id);
  }
  return ids.sort((a, b) => a - b);
}

/** The newest complete savepoint under `root` on the disk, or null. */
export function newestSavepoint(files: ReadonlyMap<string, Uint8Array>, root: string): string | null {
  let best: { id: number; dir: string } | null = null;
  for (const file of files.keys()) {
    if (baseName(file) !== METADATA_FILE_NAME || parentDir(parentDir(file)) !== root) continue;
    const sp = parseSavepointDirName(baseName(parentDir(file)));
    if (sp !== null && (best === null || sp.checkpointId > best.id)) best = { id: sp.checkpointId, dir: parentDir(file) };
  }
  return best?.dir ?? null;
}

/** The newest id of a checkpoint of the job or a savepoint under `savepointRoot` whose `_metadata` is on the disk (0: none). */
export function newestDurableId(files: ReadonlyMap<string, Uint8Array>, jobDir: string, savepointRoot: string): number {
  let newest = 0;
  for (const file of files.keys()) {
    if (baseName(file) !== METADATA_FILE_NAME) continue;
    const dir = parentDir(file);
    const id =
      parentDir(dir) === jobDir
        ? parseCheckpointDirName(baseName(dir))
        : parentDir(dir) === savepointRoot
          ? (parseSavepointDirName(baseName(dir))?.checkpointId ?? null)
          : null;
    if (id !== null) newest = Math.max(newest, id);
  }
  return newest;
}

/** Corrupts a file of the newest completed checkpoint; null when fewer than two are on the disk. */
export function corruptAtRest(files: Map<string, Uint8Array>, jobDir: string, plan: CorruptionPlan, pick: (n: number) => number): Corrupted | null {
  const ids = completedOnDisk(files, jobDir);
  if (ids.length < 2) return null;
  const checkpointId = ids[ids.length - 1]!;
  const dir = checkpointDir(jobDir, checkpointId);
  const metadata = metadataPath(dir);
  const stateFiles = [...files.keys()].filter((f) => parentDir(f) === dir && f !== metadata).sort();
  const file = plan.target === 'state-file' && stateFiles.length > 0 ? stateFiles[pick(stateFiles.length)]! : metadata;
  const bytes = files.get(file)!;
  if (plan.how === 'truncate') {
    files.set(file, bytes.subarray(0, pick(bytes.length)));
  } else {
    const flipped = Uint8Array.from(bytes);
    const at = pick(flipped.length);
    flipped[at] = flipped[at]! ^ (1 << pick(8));
    files.set(file, flipped);
  }
  return { checkpointId, file, dir };
}
