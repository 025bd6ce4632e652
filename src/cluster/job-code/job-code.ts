/**
 * Job code: the job module and the files it imports, bundled into one ESM file so a task manager
 * on another host can run a job whose files it does not have (as Flink ships a job jar through its
 * blob server). The hash names the code: a task manager checks the bytes against it before it
 * writes them, and two hosts that bundled the same files agree on it.
 */
import { createHash } from 'node:crypto';
import { ClusterError } from '../../core/errors.ts';

/** The bundle of one job module, as the job master ships it. */
export interface JobCode {
  /** The module's file name (`bank-transfers.ts`); the task manager names its copy after it. */
  readonly name: string;
  /** sha256 of `bytes`, lowercase hex. */
  readonly hash: string;
  /** One ESM file: the module and its own files; packages and node builtins stay imports. */
  readonly bytes: Uint8Array;
  /** `bytes.length`. */
  readonly sizeBytes: number;
  /** The absolute path of the module it was bundled from, on the host that bundled it. */
  readonly sourcePath: string;
}

/** What a task manager receives: enough to check and write the code. */
export type ShippedJobCode = Pick<JobCode, 'name' | 'hash' | 'bytes'>;

/** The largest bundle Weir ships: a job module is code, and more than this is data bundled by mistake. */
export const JOB_CODE_BYTES_MAX = 64 * 1024 * 1024;

const HASH_RE = /^[0-9a-f]{64}$/;

/** sha256 of `bytes` as lowercase hex: the hash a JobCode carries. */
export function jobCodeHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Whether `hash` has the form `jobCodeHash` gives (it names a directory, so nothing else may pass). */
export function isJobCodeHash(hash: string): boolean {
  return HASH_RE.test(hash);
}

/**
 * The job master's check of a task manager that keeps its own copy of the module (at the same
 * path) and sent the hash its copy bundles to: a copy whose code differs is refused, not only one
 * whose graph differs (the graph fingerprint cannot see a changed function).
 * @throws ClusterError CLUSTER_REFUSED naming both hashes.
 */
export function checkSameJobCode(ours: Pick<JobCode, 'hash' | 'sourcePath'>, theirHash: string, peer: string): void {
  if (theirHash === ours.hash) return;
  throw new ClusterError(
    'CLUSTER_REFUSED',
    peer,
    `its copy of job module ${ours.sourcePath} bundles to hash ${theirHash}, the job master's to ${ours.hash}: ` +
      'the files differ between the hosts (deploy the same files to every host, or let the job master ship the code)',
  );
}
