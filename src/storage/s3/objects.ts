/**
 * The S3 requests Weir sends, each by the `s3://bucket/key` URL of its object and retried within a
 * deadline (`retry.ts`): whole-object PUT (create-only where the server supports `If-None-Match`),
 * multipart upload for large bodies, GET (whole or a byte range), HEAD, paged listing and batch
 * delete. Failures become StorageErrors naming the URL: MISSING_FILE for a missing key,
 * STORAGE_UNREACHABLE for a missing bucket or an endpoint that does not answer, STORAGE_IO else.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { systemClock, systemRandom } from '../../core/adapters.ts';
import { StorageError } from '../../core/errors.ts';
import { createS3Client, type S3Sdk } from './client.ts';
import { httpStatusOf, isRetryableS3Error, type RetryContext, withRetries } from './retry.ts';
import type { S3Settings } from './settings.ts';
import { listPrefix, parseS3Url, s3Url } from './url.ts';

/** An object found by listing: its URL and size. */
export interface S3ObjectEntry {
  readonly url: string;
  readonly size: number;
}

/** Keys a DeleteObjects request takes at most. */
const DELETE_BATCH_MAX = 1000;

/** A client of one endpoint, shared by a storage and its savepoint writers. */
export class S3Objects {
  private clientP: Promise<{ client: S3Client; sdk: S3Sdk }> | null = null;
  private readonly random = systemRandom();

  constructor(readonly settings: S3Settings) {}

  private async sdk(): Promise<{ client: S3Client; sdk: S3Sdk }> {
    this.clientP ??= createS3Client(this.settings);
    return this.clientP;
  }

  /** A retry context whose deadline is the operation timeout from now. */
  retryContext(): RetryContext {
    return { clock: systemClock, random: this.random, deadlineMs: systemClock.now() + this.settings.operationTimeoutMs };
  }

  private async run<T>(
    url: string,
    action: string,
    send: (c: { client: S3Client; sdk: S3Sdk }, signal: AbortSignal) => Promise<T>,
    ctx?: RetryContext,
  ): Promise<T> {
    // The deadline starts once the SDK is loaded: its first import is not the operation's time.
    const c = await this.sdk();
    try {
      return await withRetries(ctx ?? this.retryContext(), (remainingMs) =>
        send(c, AbortSignal.timeout(Math.min(remainingMs, this.settings.requestTimeoutMs))),
      );
    } catch (err) {
      throw s3Error(url, action, err);
    }
  }

  /** Writes `body` as the object at `url`; with `createOnly`, a server that supports it refuses an existing key (412). */
  async put(url: string, body: Buffer, o: { createOnly?: boolean } = {}, ctx?: RetryContext): Promise<void> {
    const { bucket, key } = parseS3Url(url);
    await this.run(
      url,
      'put',
      ({ client, sdk }, abortSignal) =>
        client.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ...(o.createOnly === true ? { IfNoneMatch: '*' } : {}) }), {
          abortSignal,
        }),
      ctx,
    );
  }

  /**
   * Writes the concatenation of `chunks` (each at most one part) at `url`: one PUT when it is below
   * the multipart threshold, else a multipart upload whose parts are retried one by one. A failed
   * upload is aborted, so its parts do not linger (it was never referenced by any checkpoint).
   */
  async putLarge(url: string, body: readonly Buffer[], ctx = this.retryContext()): Promise<void> {
    let size = 0;
    for (const b of body) size += b.byteLength;
    if (size < this.settings.multipartThresholdBytes) return this.put(url, Buffer.concat(body as Buffer[]), {}, ctx);
    const { bucket, key } = parseS3Url(url);
    const parts = splitParts(body, this.settings.partSizeBytes);
    const { UploadId } = await this.run(
      url,
      'start multipart upload',
      ({ client, sdk }, abortSignal) => client.send(new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }), { abortSignal }),
      ctx,
    );
    if (UploadId === undefined) throw new StorageError('STORAGE_IO', url, 'start multipart upload: the server returned no upload id');
    try {
      const etags: string[] = new Array(parts.length);
      let next = 0;
      const worker = async () => {
        while (next < parts.length) {
          const i = next++;
          const out = await this.run(
            `${url} (part ${i + 1})`,
            'upload part',
            ({ client, sdk }, abortSignal) =>
              client.send(new sdk.UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: i + 1, Body: parts[i] }), { abortSignal }),
            ctx,
          );
          etags[i] = out.ETag ?? '';
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.settings.partsInFlightMax, parts.length) }, worker));
      await this.run(
        url,
        'complete multipart upload',
        ({ client, sdk }, abortSignal) =>
          client.send(
            new sdk.CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId,
              MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
            }),
            { abortSignal },
          ),
        ctx,
      );
    } catch (err) {
      // Our own upload, which nothing references yet: abort it (best effort; a lifecycle rule catches the rest).
      const { client, sdk } = await this.sdk();
      await client
        .send(new sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }), { abortSignal: AbortSignal.timeout(5_000) })
        .catch(() => undefined);
      throw err;
    }
  }

  /** The object's bytes (a byte range with `range`) and its total size; a missing key is MISSING_FILE naming `what`. */
  async get(url: string, what: string, range?: { start: number; end: number }): Promise<{ bytes: Uint8Array; totalBytes: number }> {
    const { bucket, key } = parseS3Url(url);
    try {
      return await this.run(url, `read ${what}`, async ({ client, sdk }, abortSignal) => {
        const out = await client.send(
          new sdk.GetObjectCommand({ Bucket: bucket, Key: key, ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }),
          { abortSignal },
        );
        const bytes = out.Body === undefined ? new Uint8Array(0) : await out.Body.transformToByteArray();
        const total = /\/(\d+)$/.exec(out.ContentRange ?? '')?.[1];
        return { bytes, totalBytes: total === undefined ? bytes.byteLength : Number(total) };
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === 'MISSING_FILE') throw new StorageError('MISSING_FILE', url, `${what} is missing`, { cause: err });
      // An empty object has no byte 0: its range is not satisfiable.
      if (range !== undefined && httpStatusOf((err as Error).cause) === 416) return { bytes: new Uint8Array(0), totalBytes: 0 };
      throw err;
    }
  }

  /** The object's size, or null when there is no object at `url`. */
  async head(url: string): Promise<number | null> {
    const { bucket, key } = parseS3Url(url);
    try {
      const out = await this.run(url, 'look up', ({ client, sdk }, abortSignal) =>
        client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal }),
      );
      return out.ContentLength ?? 0;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'MISSING_FILE') return null;
      throw err;
    }
  }

  /** Checks the bucket of `url` exists and answers; STORAGE_UNREACHABLE naming the URL otherwise. */
  async checkBucket(url: string): Promise<void> {
    const { bucket } = parseS3Url(url);
    const ctx = { ...this.retryContext(), deadlineMs: systemClock.now() + Math.min(this.settings.operationTimeoutMs, 10_000) };
    await this.run(url, 'reach bucket', ({ client, sdk }, abortSignal) => client.send(new sdk.HeadBucketCommand({ Bucket: bucket }), { abortSignal }), ctx);
  }

  /**
   * Every object below `dirUrl` (recursively; with `delimiter`, only the level right below it),
   * page by page, and with `delimiter` the sub-"directories" (common prefixes) as URLs.
   */
  async list(dirUrl: string, o: { delimiter?: boolean } = {}): Promise<{ objects: S3ObjectEntry[]; dirs: string[] }> {
    const loc = parseS3Url(dirUrl);
    const objects: S3ObjectEntry[] = [];
    const dirs: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.run(dirUrl, 'list', ({ client, sdk }, abortSignal) =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: loc.bucket,
            Prefix: listPrefix(loc),
            MaxKeys: this.settings.listPageKeysMax,
            ...(o.delimiter === true ? { Delimiter: '/' } : {}),
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
          { abortSignal },
        ),
      );
      for (const c of page.Contents ?? []) if (c.Key !== undefined) objects.push({ url: s3Url({ bucket: loc.bucket, key: c.Key }), size: c.Size ?? 0 });
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix !== undefined) dirs.push(s3Url({ bucket: loc.bucket, key: p.Prefix.replace(/\/$/, '') }));
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return { objects, dirs };
  }

  /** Deletes the objects at `urls` (all in one bucket per call batch); a key already gone is no error. */
  async deleteAll(urls: readonly string[]): Promise<void> {
    for (let i = 0; i < urls.length; i += DELETE_BATCH_MAX) {
      const batch = urls.slice(i, i + DELETE_BATCH_MAX).map((u) => parseS3Url(u));
      const bucket = batch[0]!.bucket;
      const first = urls[i]!;
      const out = await this.run(first, 'delete', ({ client, sdk }, abortSignal) =>
        client.send(new sdk.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((b) => ({ Key: b.key })), Quiet: true } }), { abortSignal }),
      );
      const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0)
        throw new StorageError('STORAGE_IO', s3Url({ bucket, key: failed[0]!.Key ?? '' }), `delete failed: ${failed[0]!.Code} ${failed[0]!.Message ?? ''}`);
    }
  }

  /** Deletes every object below `dirUrl`; returns how many there were. */
  async deleteBelow(dirUrl: string): Promise<number> {
    const { objects } = await this.list(dirUrl);
    await this.deleteAll(objects.map((o) => o.url));
    return objects.length;
  }
}

/** `body` cut into parts of `partBytes` (the last one shorter), copying only where a part spans buffers. */
function splitParts(body: readonly Buffer[], partBytes: number): Buffer[] {
  const out: Buffer[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for (let b of body) {
    while (b.byteLength > 0) {
      const take = Math.min(partBytes - pendingBytes, b.byteLength);
      pending.push(b.subarray(0, take));
      pendingBytes += take;
      b = b.subarray(take);
      if (pendingBytes === partBytes) {
        out.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (pendingBytes > 0 || out.length === 0) out.push(Buffer.concat(pending));
  return out;
}

/** An SDK failure as a StorageError naming the URL; never with credentials (SDK errors carry none). */
function s3Error(url: string, action: string, err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  const e = err as Error & { Code?: string };
  const status = httpStatusOf(err);
  const name = e?.name ?? 'Error';
  if (name === 'NoSuchBucket' || (action === 'reach bucket' && status === 404))
    return new StorageError('STORAGE_UNREACHABLE', url, `bucket does not exist (${name})`, { cause: err });
  if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return new StorageError('MISSING_FILE', url, `${action}: no such object`, { cause: err });
  if (name === 'AbortError' || name === 'TimeoutError')
    return new StorageError('STORAGE_IO', url, `${action}: no answer in time, retries included`, { cause: err });
  if (status === undefined && isRetryableS3Error(err))
    return new StorageError('STORAGE_UNREACHABLE', url, `${action}: the S3 endpoint does not answer: ${e?.message ?? String(err)}`, { cause: err });
  return new StorageError('STORAGE_IO', url, `${action} failed: ${name}${status === undefined ? '' : ` (HTTP ${status})`}: ${e?.message ?? String(err)}`, {
    cause: err,
  });
}
