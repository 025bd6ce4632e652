/**
 * S3 locations: `s3://<bucket>/<key prefix>` as users give them and as every S3 path inside Weir is
 * kept (state handles, checkpoint locations), so paths.ts joins and relates them like any other.
 * This file checks them and splits them into bucket and key for the SDK; nothing else does.
 */
import { isUrlPath } from '../paths.ts';

export const S3_SCHEME = 's3';
const PREFIX = 's3://';

/** A bucket and a key (or key prefix) without a leading or trailing `/`; `''` is the bucket's root. */
export interface S3Location {
  readonly bucket: string;
  readonly key: string;
}

// The S3 rules for new buckets: 3-63 characters, lower case, digits, dots and hyphens.
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Whether `p` is an S3 URL (`s3://...`). */
export function isS3Path(p: string): boolean {
  return p.toLowerCase().startsWith(PREFIX);
}

/**
 * The bucket and key of an S3 URL, checked: a valid bucket name, no empty, `.` or `..` segment.
 * A trailing `/` is dropped. Throws an Error saying what is wrong (the caller names the option).
 */
export function parseS3Url(url: string): S3Location {
  if (!isS3Path(url) || !isUrlPath(url)) throw new Error('expected s3://<bucket>/<prefix>');
  const rest = url.slice(PREFIX.length).replace(/\/+$/, '');
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const key = slash < 0 ? '' : rest.slice(slash + 1);
  if (!BUCKET_RE.test(bucket) || bucket.includes('..'))
    throw new Error(`bucket name ${JSON.stringify(bucket)} is not valid (3-63 characters: lower-case letters, digits, '.', '-')`);
  if (key !== '' && key.split('/').some((s) => s === '' || s === '.' || s === '..'))
    throw new Error(`key prefix ${JSON.stringify(key)} has an empty, '.' or '..' segment`);
  return { bucket, key };
}

/** `s3://<bucket>/<key>` (the bucket alone for an empty key). */
export function s3Url(loc: S3Location): string {
  return loc.key === '' ? `${PREFIX}${loc.bucket}` : `${PREFIX}${loc.bucket}/${loc.key}`;
}

/** The key prefix that lists everything below `loc` (`key/`, or `''` for the bucket's root). */
export function listPrefix(loc: S3Location): string {
  return loc.key === '' ? '' : `${loc.key}/`;
}
