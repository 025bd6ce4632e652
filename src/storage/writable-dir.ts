/**
 * Checks, before a job starts, that a directory it will write to can be written: created when
 * asked, then a probe file created, fsynced and removed. Failing for root too (a read-only mount,
 * an immutable directory, a file where a directory belongs), it reports a ConfigError naming the
 * option and the directory instead of letting the job fail and restart on it later.
 */
import { closeSync, fsyncSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../core/errors.ts';
import { errnoCode } from './atomic-write.ts';
import { makeDirsSync } from './make-dirs.ts';

export interface WritableDirCheck {
  /** The option that names the directory (e.g. `checkpointStorage`). */
  readonly option: string;
  /** What the directory is for, for the message (e.g. `checkpoint directory`). */
  readonly what: string;
  /** Create it (and its parents) when missing; otherwise a missing directory is the error. */
  readonly create: boolean;
}

export function checkWritableDir(dir: string, check: WritableDirCheck): void {
  const abs = path.resolve(dir);
  const fail = (problem: string) => new ConfigError(check.option, `${check.what} ${abs} ${problem}`);
  const kind = kindOf(abs);
  if (kind === 'file') throw fail('is a file, not a directory');
  if (kind === 'missing') {
    if (!check.create) throw fail('does not exist');
    try {
      makeDirsSync(abs);
    } catch (err) {
      throw fail(`cannot be created: ${describeFsError(abs, err)}`);
    }
  }
  const probe = path.join(abs, `.weir-write-probe-${process.pid}`);
  let fd: number | null = null;
  try {
    fd = openSync(probe, 'wx');
    writeSync(fd, 'weir');
    fsyncSync(fd);
  } catch (err) {
    throw fail(`cannot be written: ${describeFsError(abs, err)}`);
  } finally {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(probe);
    } catch {
      // not created, or gone already
    }
  }
}

function kindOf(p: string): 'dir' | 'file' | 'missing' {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'file';
  } catch (err) {
    // ENOTDIR: a parent is a file; mkdir reports it with that parent's name below.
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return 'missing';
    throw err;
  }
}

/** The reason in words, naming the parent that is a file when that is the cause. */
function describeFsError(dir: string, err: unknown): string {
  const code = errnoCode(err);
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    for (let p = path.dirname(dir); p !== path.dirname(p); p = path.dirname(p)) {
      if (kindOf(p) === 'file') return `${p} is a file, not a directory`;
    }
  }
  if (code === 'EROFS') {
    // From mkdir: the directory that could not be made names where the read-only file system is.
    const at = (err as NodeJS.ErrnoException).path;
    const inside = at === undefined || path.dirname(at) === dir;
    return inside ? 'the file system is read-only (EROFS)' : `the file system is read-only (EROFS) at ${path.dirname(at)}`;
  }
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code}): ${err instanceof Error ? err.message : String(err)}`;
  return err instanceof Error ? err.message : String(err);
}
