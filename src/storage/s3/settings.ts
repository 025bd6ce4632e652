/**
 * How Weir talks to an S3-compatible endpoint. The endpoint, region and credentials are the AWS
 * SDK's business (its default credential chain; `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`,
 * `AWS_REGION`), so they are never in Weir's options, logs, metadata or REST answers; Weir adds
 * only path-style addressing (`s3.forcePathStyle`, env `WEIR_S3_FORCE_PATH_STYLE=1`) for servers
 * that have no virtual-hosted buckets, and the sizes and time limits of its own uploads.
 */

export interface S3Settings {
  /** Address buckets as `<endpoint>/<bucket>` instead of `<bucket>.<endpoint>`. */
  readonly forcePathStyle: boolean;
  /** One operation (an upload with all its retries) gives up this many ms after it started: the checkpoint timeout. */
  readonly operationTimeoutMs: number;
  /** One request that has not been answered after this many ms is given up and sent again (if the operation has time left). */
  readonly requestTimeoutMs: number;
  /** A state object at least this large is uploaded in parts (multipart upload); smaller ones in one PUT. */
  readonly multipartThresholdBytes: number;
  /** The size of each part of a multipart upload (S3's minimum is 5 MiB but for the last part). */
  readonly partSizeBytes: number;
  /** Parts of one multipart upload in flight at once (bounded, Invariant 7). */
  readonly partsInFlightMax: number;
  /** Keys asked for per ListObjectsV2 page (S3 answers 1000 at most). */
  readonly listPageKeysMax: number;
}

export const DEFAULT_S3_SETTINGS: S3Settings = {
  forcePathStyle: false,
  operationTimeoutMs: 600_000,
  requestTimeoutMs: 120_000,
  multipartThresholdBytes: 16 * 1024 * 1024,
  partSizeBytes: 8 * 1024 * 1024,
  partsInFlightMax: 4,
  listPageKeysMax: 1000,
};

/** The environment variable that turns path-style addressing on (`1` or `true`). */
export const FORCE_PATH_STYLE_ENV = 'WEIR_S3_FORCE_PATH_STYLE';

/** Whether the environment asks for path-style addressing. */
export function forcePathStyleFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[FORCE_PATH_STYLE_ENV]?.trim().toLowerCase();
  return v === '1' || v === 'true';
}

/** The settings with defaults filled in; path style on when the option or the environment asks for it. */
export function s3Settings(given: Partial<S3Settings> = {}): S3Settings {
  const s = { ...DEFAULT_S3_SETTINGS, ...given };
  return { ...s, forcePathStyle: s.forcePathStyle || forcePathStyleFromEnv() };
}
