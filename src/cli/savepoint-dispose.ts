/**
 * `weir savepoint dispose <path>`: deletes one savepoint directory. Savepoints belong to people, so
 * the engine never deletes them; this is how a person does. Anything that is not a savepoint — no
 * `_metadata`, metadata of a checkpoint, a `chk-<n>` directory, metadata that does not verify, or a
 * directory holding more than a savepoint — is refused (exit 2) and left untouched.
 */
import { resolveStorageLocation } from '../storage/location.ts';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { filePathsOf } from '../checkpoint/metadata/walk.ts';
import type { CheckpointMetadata } from '../checkpoint/metadata/metadata.ts';
import { errorMessage, StorageError } from '../core/errors.ts';
import { readMetadataAt } from '../checkpoint/metadata/read.ts';
import { fsSnapshotReader } from '../storage/fs-inspect.ts';
import { listDir, pathKind } from '../storage/fs-io.ts';
import { isInside, METADATA_FILE_NAME, metadataPath, parseCheckpointDirName } from '../storage/paths.ts';
import { EXIT_OK, UsageError } from './exit.ts';

/** Checks that `dir` is a savepoint directory; resolves with its metadata or throws a one-line UsageError naming it. */
export async function checkSavepointDir(dir: string): Promise<CheckpointMetadata> {
  const refuse = (why: string): UsageError => new UsageError(`not a savepoint: ${dir} ${why}; nothing deleted`);
  const kind = await pathKind(dir);
  if (kind === 'missing') throw refuse('does not exist');
  if (kind !== 'dir') throw refuse('is not a directory');
  const chk = parseCheckpointDirName(path.basename(dir));
  if (chk !== null) throw refuse(`is checkpoint ${chk} of a job (chk-${chk}); its job's retention deletes checkpoints`);
  if ((await pathKind(metadataPath(dir))) !== 'file') throw refuse(`has no ${METADATA_FILE_NAME}`);
  let meta: CheckpointMetadata;
  try {
    meta = await readMetadataAt(fsSnapshotReader, dir);
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    throw refuse(`has a ${METADATA_FILE_NAME} that does not verify (${errorMessage(err)})`);
  }
  if (meta.kind !== 'savepoint') throw refuse(`holds a ${meta.kind} (checkpoint ${meta.checkpointId} of job ${meta.jobId}), not a savepoint`);
  const outside = filePathsOf(meta).find((p) => !isInside(dir, p));
  if (outside !== undefined) throw refuse(`references ${outside} outside itself, which a savepoint never does`);
  const subdir = (await listDir(dir)).find((e) => e.isDirectory());
  if (subdir !== undefined) throw refuse(`contains a directory (${subdir.name}), which a savepoint never does`);
  return meta;
}

export async function disposeCommand(p: string): Promise<number> {
  const dir = path.resolve(resolveStorageLocation(p, 'savepoint dispose <path>'));
  const meta = await checkSavepointDir(dir);
  await fsp.rm(dir, { recursive: true });
  process.stdout.write(`disposed savepoint ${dir} (checkpoint ${meta.checkpointId} of job ${meta.jobId})\n`);
  return EXIT_OK;
}
