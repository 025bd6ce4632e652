/**
 * The lineage of a job directory: which snapshot its run was restored from, recorded in
 * `<job dir>/_restored_from` (checksummed envelope, written atomically) when a run starts from
 * `--from`. Each resume writes a new job directory, so `--from <job dir>` follows this record when
 * none of the directory's own checkpoints verifies, or when its run completed none.
 */
import { StorageError } from '../core/errors.ts';
import { type CheckpointId, checkpointId } from '../core/ids.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { decodeEnvelope, encodeEnvelope } from './file-format.ts';
import { pathKind, readFileChecked } from './fs-io.ts';
import { restoredFromPath } from './paths.ts';

/** The snapshot a job directory's run was restored from. */
export interface RestoredFrom {
  /** Absolute path of the checkpoint or savepoint directory (the one holding `_metadata`). */
  readonly location: string;
  readonly checkpointId: CheckpointId;
  readonly kind: 'checkpoint' | 'savepoint';
}

const VERSION = 1;

export function encodeRestoredFrom(r: RestoredFrom): Uint8Array {
  const body = { location: r.location, checkpointId: r.checkpointId, kind: r.kind };
  return encodeEnvelope('restored-from', VERSION, new TextEncoder().encode(JSON.stringify(body)));
}

/** Verifies and decodes the bytes of `file`; anything wrong is a StorageError naming it. */
export function decodeRestoredFrom(bytes: Uint8Array, file: string): RestoredFrom {
  const { body } = decodeEnvelope('restored-from', bytes, file, [VERSION]);
  let o: unknown;
  try {
    o = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (err) {
    throw new StorageError('CORRUPT_FILE', file, 'restored-from record is not JSON', { cause: err });
  }
  const r = o as Partial<Record<keyof RestoredFrom, unknown>> | null;
  if (
    r === null ||
    typeof r !== 'object' ||
    typeof r.location !== 'string' ||
    r.location === '' ||
    !Number.isSafeInteger(r.checkpointId) ||
    (r.checkpointId as number) < 0 ||
    (r.kind !== 'checkpoint' && r.kind !== 'savepoint')
  ) {
    throw new StorageError('CORRUPT_FILE', file, 'restored-from record lacks location, checkpointId or kind');
  }
  return { location: r.location, checkpointId: checkpointId(r.checkpointId as number), kind: r.kind };
}

/** The record of `jobDir` on the file system, or null when it has none (a run that started empty). */
export async function readRestoredFromFs(jobDir: string): Promise<RestoredFrom | null> {
  const file = restoredFromPath(jobDir);
  if ((await pathKind(file)) === 'missing') return null;
  return decodeRestoredFrom(await readFileChecked(file, 'restored-from record'), file);
}

/** Records in `jobDir` that its run was restored from `r` (replacing an earlier record atomically). */
export async function writeRestoredFromFs(jobDir: string, r: RestoredFrom, tempSuffix: string): Promise<void> {
  await writeFileAtomic(restoredFromPath(jobDir), encodeRestoredFrom(r), tempSuffix);
}
