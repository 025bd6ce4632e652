/**
 * The snapshot tools of S3 locations (`snapshot-tools.ts`): the CLI lists, inspects and disposes
 * snapshots in a bucket as it does in a directory, a "directory" being a key prefix with objects
 * below it. The client is configured the AWS way from the environment (and
 * `WEIR_S3_FORCE_PATH_STYLE`), as a CLI without job options has nothing else.
 */
import type { SnapshotTools } from '../snapshot-tools.ts';
import { metadataPath } from '../paths.ts';
import { deleteSnapshotObjects } from './commit.ts';
import { S3Objects } from './objects.ts';
import { readStateS3, s3SnapshotReader } from './reader.ts';
import { s3Settings } from './settings.ts';

export function s3SnapshotTools(objects = new S3Objects(s3Settings())): SnapshotTools {
  return {
    reader: s3SnapshotReader(objects),
    readState: (handle) => readStateS3(objects, handle),
    lister: {
      absolute: (p) => p.replace(/\/+$/, ''),
      kind: async (p) => {
        if ((await objects.head(p)) !== null) return 'file';
        const { objects: below, dirs } = await objects.list(p, { delimiter: true });
        return below.length > 0 || dirs.length > 0 ? 'dir' : 'missing';
      },
      subdirs: async (dir) => (await objects.list(dir, { delimiter: true })).dirs,
      hasMetadata: async (dir) => (await objects.head(metadataPath(dir))) !== null,
    },
    removeDir: (dir) => deleteSnapshotObjects(objects, dir),
  };
}
