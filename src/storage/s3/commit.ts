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
