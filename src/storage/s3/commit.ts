/**
 * The commit point of a checkpoint or savepoint in a store without rename: `_metadata` written last,
 * in one PUT, create-only. `If-None-Match: *` makes the server refuse a second `_metadata` where it
 * supports conditional writes (AWS S3 since 2024, MinIO); a server that ignores it (s3rver, older
 * ones) is covered by a HEAD just before the PUT, which excludes a second writer that committed
 * before this one looked, not one racing in the milliseconds between HEAD and PUT. A run's own
 * checkpoints are also fenced by its run marker (`run-marker.ts`), checked before the HEAD. A 412
 * on a retried PUT whose first answer was lost is our own object: its bytes are compared.
 */
import { StorageError } from '../../core/errors.ts';
import { metadataPath } from '../paths.ts';
import type { S3Objects } from './objects.ts';
import { httpStatusOf } from './retry.ts';

/** Writes `bytes` at `url` unless an object is there already (STORAGE_IO naming it then). */
export async function commitCreateOnly(objects: S3Objects, url: string, bytes: Uint8Array, what: string): Promise<void> {
  if ((await objects.head(url)) !== null)
    throw new StorageError('STORAGE_IO', url, `${what} is already committed (another writer wrote this _metadata); not overwriting it`);
  try {
    await objects.put(url, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { createOnly: true });
  } catch (err) {
    const status = err instanceof StorageError ? httpStatusOf(err.cause) : undefined;
    if (status !== 412 && status !== 409) throw err;
    // A retry of our own PUT whose answer was lost finds our own object: that is our commit.
    if (await holds(objects, url, bytes)) return;
    throw new StorageError('STORAGE_IO', url, `${what} is already committed (the server refused a second _metadata); not overwriting it`, { cause: err });
  }
}

/** Whether the object at `url` holds exactly `bytes`. */
async function holds(objects: S3Objects, url: string, bytes: Uint8Array): Promise<boolean> {
  const found = (await objects.get(url, '_metadata')).bytes;
  return Buffer.compare(Buffer.from(found.buffer, found.byteOffset, found.byteLength), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) === 0;
}

/**
 * Deletes the objects below the snapshot directory `dir`, `_metadata` first: the reverse of the
 * commit, so a deletion cut short leaves an incomplete snapshot (never restored, removed at the
 * next start or by a second dispose), never a complete-looking one whose objects are gone.
 */
export async function deleteSnapshotObjects(objects: S3Objects, dir: string): Promise<void> {
  const { objects: below } = await objects.list(dir);
  const meta = metadataPath(dir);
  if (below.some((o) => o.url === meta)) await objects.deleteAll([meta]);
  await objects.deleteAll(below.map((o) => o.url).filter((u) => u !== meta));
}
