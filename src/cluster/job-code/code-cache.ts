/**
 * The task manager's side of shipping job code: checks the bytes the job master sent against
 * their hash and writes them to `<cacheDir>/<hash>/<module name>.mjs`, the file the task manager
 * imports. The file is written whole or not at all (temporary file, fsync, rename), so a task
 * manager killed mid-write leaves no half file a later one would import; one already there is
 * reused when its bytes still have the hash. Packages the code imports are resolved from the task
 * manager's installation (resolve-hook.ts), not from the cache.
 *
 * The other mode, the module kept at the same path on every host: the task manager bundles its
 * own copy (`hashOfLocalModule`) and the job master compares hashes, so a copy whose functions
 * differ is refused (the graph fingerprint only catches a different graph).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isJobCodeHash, jobCodeHash, type ShippedJobCode } from './job-code.ts';
import { ClusterError } from '../../core/errors.ts';
import { writeFileAtomic } from '../../storage/atomic-write.ts';

/**
 * `$WEIR_HOME/job-code` when WEIR_HOME is set (Weir's own directory, as for the job registry), else
 * `$XDG_CACHE_HOME/weir/job-code`, else `~/.cache/weir/job-code`; a task manager given another
 * directory (`--cache-dir`) uses that instead.
 */
export function defaultJobCodeCacheDir(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  if (env.WEIR_HOME !== undefined && path.isAbsolute(env.WEIR_HOME)) return path.join(env.WEIR_HOME, 'job-code');
  const xdg = env.XDG_CACHE_HOME;
  // The XDG spec says to ignore a relative path.
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache');
  return path.join(base, 'weir', 'job-code');
}

/** The path `code` is written to under `cacheDir`: `<cacheDir>/<hash>/<name without extension>.mjs`. */
export function jobCodePath(code: Pick<ShippedJobCode, 'name' | 'hash'>, cacheDir: string): string {
  return path.join(path.resolve(cacheDir), code.hash, `${code.name.replace(/\.[^.]*$/, '')}.mjs`);
}

/**
 * Checks `code` and writes it to the cache (or finds it there); resolves to the absolute path of
 * the file to import. `peer` names the sender in errors.
 * @throws ClusterError CLUSTER_REFUSED when the bytes do not have the hash, or the name or hash
 * could not name a file in the cache; StorageError when the file cannot be written.
 */
export async function materializeJobCode(code: ShippedJobCode, cacheDir: string, peer = 'job master'): Promise<string> {
  checkNameAndHash(code, peer);
  const actual = jobCodeHash(code.bytes);
  if (actual !== code.hash) {
    throw new ClusterError(
      'CLUSTER_REFUSED',
      peer,
      `job code ${code.name} was sent with hash ${code.hash} but its ${code.bytes.length} bytes hash to ${actual}`,
    );
  }
  const file = jobCodePath(code, cacheDir);
  if (await hasHash(file, code.hash)) return file;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // The suffix keeps two task managers that share the cache from writing the same temporary file.
  await writeFileAtomic(file, code.bytes, `${process.pid}-${randomBytes(6).toString('hex')}`);
  return file;
}

/** Bundles the module at `modulePath` as the job master does and returns the hash, for comparing a local copy with the job master's. */
export async function hashOfLocalModule(modulePath: string): Promise<string> {
  // Loaded here, not above: a task manager that is sent the code never needs esbuild (a few hundred ms to load on a busy host).
  const { bundleJobModule } = await import('./bundle.ts');
  return (await bundleJobModule(modulePath)).hash;
}

function checkNameAndHash(code: ShippedJobCode, peer: string): void {
  if (!isJobCodeHash(code.hash))
    throw new ClusterError('CLUSTER_REFUSED', peer, `job code ${JSON.stringify(code.name)}: ${JSON.stringify(code.hash)} is not a sha256 hex hash`);
  const { name } = code;
  if (name === '' || name === '.' || name === '..' || name !== path.basename(name) || /[\\/\0]/.test(name)) {
    throw new ClusterError('CLUSTER_REFUSED', peer, `job code name ${JSON.stringify(name)} is not a file name`);
  }
}

/** Whether `file` exists with bytes of `hash` (a file that rotted is rewritten). */
async function hasHash(file: string, hash: string): Promise<boolean> {
  try {
    return jobCodeHash(await readFile(file)) === hash;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
