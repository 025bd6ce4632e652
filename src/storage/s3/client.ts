/**
 * The S3 client, loaded on first use: `@aws-sdk/client-s3` (the official SDK, so endpoints,
 * regions, credentials and request signing work the AWS way against any S3-compatible server) is
 * large, and a job that never touches S3 should not pay for loading it. Its own retries are off:
 * `retry.ts` retries within the checkpoint's time, which the SDK does not know.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from './settings.ts';

export type S3Sdk = typeof import('@aws-sdk/client-s3');

let sdk: Promise<S3Sdk> | null = null;

/** The SDK module, imported once per process. */
export function loadS3Sdk(): Promise<S3Sdk> {
  // Weir pins the last SDK release that supports Node 20 on purpose; its notice that later releases
  // will not gives a user nothing to act on, so it is silenced unless the user set the variable.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  sdk ??= import('@aws-sdk/client-s3');
  return sdk;
}

/** A client with the SDK's default endpoint, region and credential resolution, and no SDK retries. */
export async function createS3Client(settings: S3Settings): Promise<{ client: S3Client; sdk: S3Sdk }> {
  const m = await loadS3Sdk();
  const client = new m.S3Client({
    forcePathStyle: settings.forcePathStyle,
    maxAttempts: 1,
    // Checksums only when an operation requires them: S3-compatible servers that do not know the
    // newer flexible checksums reject or mis-store bodies sent with them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return { client, sdk: m };
}
