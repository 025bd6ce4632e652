/**
 * `weir savepoint dispose <path>`: deletes one savepoint directory. Savepoints belong to people, so
 * the engine never deletes them; this is how a person does. Anything that is not a savepoint — no
 * `_metadata`, metadata of a checkpoint, a `chk-<n>` directory, metadata that does not verify, or a
 * directory holding more than a savepoint — is refused (exit 2) and left untouched.
 */
import { absoluteLocation, resolveStorageLocation, snapshotToolsFor } from '../storage/location.ts';
import { filePathsOf } from '../checkpoint/metadata/walk.ts';
import type { CheckpointMetadata } from '../checkpoint/metadata/metadata.ts';
import { errorMessage, StorageError } from '../core/errors.ts';
import { readMetadataAt } from '../checkpoint/metadata/read.ts';
import { baseName, isInside, METADATA_FILE_NAME, parseCheckpointDirName } from '../storage/paths.ts';
import { FS_SNAPSHOT_TOOLS, type SnapshotTools } from '../storage/snapshot-tools.ts';
import { EXIT_OK, UsageError } from './exit.ts';

/**
 * Checks that `dir` is a savepoint directory (on the file system unless another storage's `tools`
 * are given); resolves with its metadata or throws a one-line UsageError naming it.
 */
export async function checkSavepointDir(dir: string, tools: SnapshotTools = FS_SNAPSHOT_TOOLS): Promise<CheckpointMetadata> {
  const refuse = (why: string): UsageError => new UsageError(`not a savepoint: ${dir} ${why}; nothing deleted`);
  const kind = await tools.lister.kind(dir);
  if (kind === 'missing') throw refuse('does not exist');
  if (kind !== 'dir') throw refuse('is not a directory');
  const chk = parseCheckpointDirName(baseName(dir));
  if (chk !== null) throw refuse(`is checkpoint ${chk} of a job (chk-${chk}); its job's retention deletes checkpoints`);
  if (!(await tools.lister.hasMetadata(dir))) throw refuse(`has no ${METADATA_FILE_NAME}`);
  let meta: CheckpointMetadata;
  try {
    meta = await readMetadataAt(tools.reader, dir);
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    throw refuse(`has a ${METADATA_FILE_NAME} that does not verify (${errorMessage(err)})`);
  }
  if (meta.kind !== 'savepoint') throw refuse(`holds a ${meta.kind} (checkpoint ${meta.checkpointId} of job ${meta.jobId}), not a savepoint`);
  const outside = filePathsOf(meta).find((p) => !isInside(dir, p));
  if (outside !== undefined) throw refuse(`references ${outside} outside itself, which a savepoint never does`);
  const subdir = (await tools.lister.subdirs(dir))[0];
  if (subdir !== undefined) throw refuse(`contains a directory (${baseName(subdir)}), which a savepoint never does`);
  return meta;
}

export async function disposeCommand(p: string): Promise<number> {
  const dir = absoluteLocation(resolveStorageLocation(p, 'savepoint dispose <path>'));
  const tools = snapshotToolsFor(dir, 'savepoint dispose <path>');
  const meta = await checkSavepointDir(dir, tools);
  await tools.removeDir(dir);
  process.stdout.write(`disposed savepoint ${dir} (checkpoint ${meta.checkpointId} of job ${meta.jobId})\n`);
  return EXIT_OK;
}
