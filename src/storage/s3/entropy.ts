/**
 * Entropy injection, as Flink does it: a root such as `s3://bucket/_entropy_/checkpoints` puts each
 * exclusive state object of a checkpoint under a random segment in place of `_entropy_`
 * (`s3://bucket/k3f9/checkpoints/<job>/chk-7/...`), so uploads spread over many key prefixes (S3
 * partitions its request rate by prefix); `_metadata`, the job's records and shared (incremental)
 * objects keep stable keys with the marker removed (`s3://bucket/checkpoints/<job>/...`), and so do
 * savepoints. A checkpoint's exclusive objects are found again by listing below the part of the
 * root before the marker (`objectsOfCheckpoint`).
 */
import { randomBytes } from 'node:crypto';
import { assert } from '../../core/assert.ts';
import { joinPath } from '../paths.ts';

export const ENTROPY_MARKER = '_entropy_';
const ENTROPY_CHARS = 4;

/** A root split at its entropy marker; null when it has none. */
export interface EntropyRoot {
  /** The root before the marker (`s3://bucket`). */
  readonly before: string;
  /** The segments after the marker (`checkpoints`), '' when none. */
  readonly after: string;
}

/** Where the marker is in `root` (a segment of its own, at most once). */
export function entropyRootOf(root: string): EntropyRoot | null {
  const segments = root.split('/');
  const at = segments.indexOf(ENTROPY_MARKER);
  if (at < 0) return null;
  assert(segments.indexOf(ENTROPY_MARKER, at + 1) < 0, () => `${root}: more than one ${ENTROPY_MARKER} segment`);
  return { before: segments.slice(0, at).join('/'), after: segments.slice(at + 1).join('/') };
}

/** The root with the marker removed: where `_metadata` and other stable keys go. */
export function stableRoot(root: string): string {
  const e = entropyRootOf(root);
  if (e === null) return root;
  return e.after === '' ? e.before : joinPath(e.before, e.after);
}

/** The root with the marker replaced by fresh random characters: where one state object goes. */
export function injectedRoot(e: EntropyRoot): string {
  const random = randomBytes(ENTROPY_CHARS).toString('hex').slice(0, ENTROPY_CHARS);
  return e.after === '' ? joinPath(e.before, random) : joinPath(e.before, random, e.after);
}

/**
 * Whether `url`, found by listing below `e.before`, lies under `<before>/<random>/<after>/<tail>/`
 * for some random segment: the injected home of `<stable root>/<tail>`.
 */
export function isInjectedUnder(e: EntropyRoot, url: string, tail: string): boolean {
  const rest = url.slice(e.before.length + 1);
  const slash = rest.indexOf('/');
  if (!url.startsWith(`${e.before}/`) || slash < 0) return false;
  const expected = e.after === '' ? `${tail}/` : `${e.after}/${tail}/`;
  return rest.slice(slash + 1).startsWith(expected);
}
