/**
 * A real S3 protocol server on loopback for the S3 storage tests: s3rver (the only S3 server
 * installable here; Debian has no MinIO) in a child process started with `--openssl-legacy-provider`
 * (its ListObjectsV2 paging needs it on Node 20), on a free port, with its data in a temporary
 * directory removed when it stops. s3rver ignores `If-None-Match` on PUT, so tests of create-only
 * commits exercise the storage's own second-writer exclusion.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tempDir } from './jobs.ts';

const MAIN = new URL('./s3rver-main.mjs', import.meta.url).pathname;

/** Test credentials s3rver accepts (it checks signatures against these). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** A running s3rver: its endpoint URL, and how to stop it. */
export interface S3TestServer {
  readonly endpoint: string;
  readonly port: number;
  /** Environment variables a child process (the `weir` CLI) needs to reach it the AWS way. */
  readonly env: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** Starts s3rver with `buckets` created; the caller stops it (which removes its data). */
export async function startS3rver(buckets: readonly string[] = ['weir-test']): Promise<S3TestServer> {
  const dir = tempDir('weir-s3rver-');
  const child = spawn(process.execPath, ['--openssl-legacy-provider', MAIN, dir, ...buckets], { stdio: ['ignore', 'pipe', 'pipe'] });
  let port: number;
  try {
    port = await portOf(child);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      WEIR_S3_FORCE_PATH_STYLE: '1',
    },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) {
        const parsed = JSON.parse(line) as { port?: unknown };
        if (typeof parsed.port === 'number') resolve(parsed.port);
        else reject(new Error(`s3rver printed ${line}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before listening: ${err.trim()}`)));
  });
}
