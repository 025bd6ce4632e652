/**
 * Where the job registry lives and the check that makes it safe to use. The registry holds each
 * running job's control address and secret token, so it is per user: `$WEIR_HOME/jobs` when
 * WEIR_HOME is set, else `$XDG_RUNTIME_DIR/weir` when that runtime directory is set and ours, else
 * `~/.weir/jobs`. It is created 0700 and, before every use, must be a real directory (not a
 * symlink) owned by this user that no one else can read or write; otherwise Weir refuses it.
 */
import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from './exit.ts';

/** A registry directory that is missing a safety property; the message names the path and the fix. */
export class UnsafeRegistryError extends UsageError {
  constructor(
    readonly dir: string,
    problem: string,
  ) {
    super(
      `refusing the job registry ${dir}: ${problem}; it must be a directory owned by you with mode 0700 (chmod 700 ${dir}, or set WEIR_HOME to use another place)`,
    );
    this.name = 'UnsafeRegistryError';
  }
}

const GROUP_OR_OTHER_BITS = 0o077;

function currentUid(): number {
  return process.getuid?.() ?? -1;
}

/** Whether `dir` is a directory owned by this user (for choosing $XDG_RUNTIME_DIR). */
function ownDirectory(dir: string): boolean {
  try {
    const info = lstatSync(dir);
    return info.isDirectory() && info.uid === currentUid();
  } catch {
    return false;
  }
}

/** The registry directory for this user and environment (not created, not checked). */
export function registryDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.WEIR_HOME;
  if (home !== undefined && home !== '') return path.join(path.resolve(home), 'jobs');
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && path.isAbsolute(runtime) && ownDirectory(runtime)) return path.join(runtime, 'weir');
  return path.join(os.homedir(), '.weir', 'jobs');
}

/** What is wrong with `info` as the registry directory, or null when it is safe. */
export function registryDirProblem(info: Stats, uid = currentUid()): string | null {
  if (info.isSymbolicLink()) return 'it is a symbolic link';
  if (!info.isDirectory()) return 'it is not a directory';
  if (uid >= 0 && info.uid !== uid) return `it is owned by uid ${info.uid}, not by you (uid ${uid})`;
  const mode = info.mode & 0o777;
  if ((mode & GROUP_OR_OTHER_BITS) !== 0) return `its mode is 0${mode.toString(8)}, open to other users`;
  return null;
}

/** Checks the registry directory without creating it; resolves to null when it does not exist yet. */
export function checkedRegistryDir(dir = registryDir()): string | null {
  let info: Stats;
  try {
    info = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnsafeRegistryError(dir, `cannot inspect it (${(err as Error).message})`);
  }
  const problem = registryDirProblem(info);
  if (problem !== null) throw new UnsafeRegistryError(dir, problem);
  return dir;
}

/** Creates the registry directory (0700, parents too) if needed and checks it. */
export function ensureRegistryDir(dir = registryDir()): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new UnsafeRegistryError(dir, `cannot create it (${(err as Error).message})`);
  }
  const checked = checkedRegistryDir(dir);
  if (checked === null) throw new UnsafeRegistryError(dir, 'it vanished right after it was created');
  return checked;
}
