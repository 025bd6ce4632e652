/**
 * The `s3:` entry of the storage scheme registry (`location.ts`): what makes `checkpointStorage:
 * 's3://bucket/prefix'`, `--checkpoint-dir`, `--from`, `--dir` and the CLI's listings accept S3
 * locations. Opening a storage loads nothing: the SDK is imported on the first request.
 */
import type { StorageScheme } from '../location.ts';
import { S3CheckpointStorage } from './s3-storage.ts';
import { s3SnapshotTools } from './tools.ts';
import { S3_SCHEME, parseS3Url } from './url.ts';

export const S3_STORAGE_SCHEME: StorageScheme = {
  scheme: S3_SCHEME,
  location: (given) => {
    parseS3Url(given);
    // Kept as the URL, without a trailing slash, with the scheme in lower case.
    return `${S3_SCHEME}://${given.slice(S3_SCHEME.length + 3).replace(/\/+$/, '')}`;
  },
  open: (root, jobId, o) =>
    new S3CheckpointStorage(root, jobId, {
      ...(o.s3?.forcePathStyle === undefined ? {} : { forcePathStyle: o.s3.forcePathStyle }),
      ...(o.operationTimeoutMs === undefined ? {} : { operationTimeoutMs: o.operationTimeoutMs }),
    }),
  tools: () => s3SnapshotTools(),
};
