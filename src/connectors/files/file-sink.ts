/**
 * Exactly-once file sink. Each subtask appends lines to a hidden in-progress file; on the barrier
 * the file is flushed, fsynced and closed (pre-commit) and its name goes into the checkpoint; when
 * the checkpoint completes it is linked to `part-<subtask>-<checkpoint>` and becomes visible.
 *
 * In-progress files are named `<uid>-<subtask>of<parallelism>-<runId>-<seq>.inprogress`: the run id
 * is unique per process and attempt, so a run never picks up, truncates or commits a file another
 * run wrote, even when several processes restore the same checkpoint one after another. On open a
 * subtask deletes this sink's in-progress files of other runs that no restored committable names
 * (the restored committables are those of every subtask, so this holds across rescales too).
 *
 * A commit never overwrites committed output: it hard-links the in-progress file to its final name
 * (which fails if the name exists) and then unlinks the in-progress name, so a repeated commit after
 * a crash is recognised by the shared inode and a clash with other output is an error naming both.
 * The sink knows the newest checkpoint it committed from the final names, and can move the output
 * of later checkpoints aside (`.rolled-back/`) when recovery has to restore an older checkpoint.
 */
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, StorageError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';

/** Where and how a `FileSink` writes. */
export interface FileSinkOptions {
  /** The output directory (created if missing); committed part files appear here, uncommitted ones under `.in-progress/`. */
  readonly directory: string;
  /** Turns a record into one line (JSON for non-strings by default). */
  readonly format?: (record: any) => string;
}

/** A pre-committed part file, as recorded in a checkpoint: committing renames it into place. */
export interface FileCommittable {
  /** Its in-progress path. */
  readonly inProgress: string;
  /** The visible path it gets when committed. */
  readonly final: string;
}

const IN_PROGRESS_DIR = '.in-progress';
const ROLLED_BACK_DIR = '.rolled-back';
const FINAL_NAME = /^part-(\d+)-(\d+)$/;
const IN_PROGRESS_REST = /^\d+of\d+-([0-9a-z]+-a\d+)-\d+\.inprogress$/;

/** A uid as a file-name part: characters outside [A-Za-z0-9_.] are escaped. */
function fileSafe(uid: string): string {
  return uid.replace(/[^A-Za-z0-9_.]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

// Commits use synchronous fs calls: renames are quick, each awaited call would cost a turn of the
// event loop, and synchronous commits keep simulated runs deterministic.
function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function inode(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Makes one pre-committed file visible; safe to repeat after a crash at any point. */
function commitOne(c: FileCommittable): void {
  const pending = inode(c.inProgress);
  const visible = inode(c.final);
  if (pending === null) {
    if (visible === null) throw new StorageError('MISSING_FILE', c.inProgress, `pre-committed file is gone and ${c.final} was never committed`);
    return; // committed before
  }
  if (visible === null) linkSync(c.inProgress, c.final);
  else if (visible !== pending) {
    throw new StorageError(
      'CORRUPT_FILE',
      c.final,
      `committing ${c.inProgress} would overwrite this file, which holds other committed output; the sink directory is shared with another job or run`,
    );
  }
  unlinkSync(c.inProgress);
}

class FileSinkWriter implements TwoPhaseCommitWriter<unknown, FileCommittable> {
  private fd: number | null = null;
  private path = '';
  private pendingText = '';
  private prefix = '';
  private seq = 0;
  private wroteAny = false;
  private subtask = 0;

  constructor(private readonly options: FileSinkOptions) {}

  private get stagingDir(): string {
    return join(this.options.directory, IN_PROGRESS_DIR);
  }

  async open(ctx: RuntimeContext, restored: readonly FileCommittable[]): Promise<void> {
    this.subtask = ctx.subtaskIndex;
    const uidPart = `${fileSafe(ctx.uid)}-`;
    this.prefix = `${uidPart}${ctx.subtaskIndex}of${ctx.parallelism}-${ctx.runId}-`;
    mkdirSync(this.stagingDir, { recursive: true });
    const keep = new Set(restored.map((p) => p.inProgress));
    for (const name of readdirSync(this.stagingDir)) {
      if (!name.startsWith(uidPart)) continue;
      const run = IN_PROGRESS_REST.exec(name.slice(uidPart.length))?.[1];
      const full = join(this.stagingDir, name);
      if (run !== undefined && run !== ctx.runId && !keep.has(full)) rmSync(full, { force: true });
    }
  }

  write(record: unknown): void {
    const line = this.options.format ? this.options.format(record) : typeof record === 'string' ? record : JSON.stringify(record);
    this.pendingText += line + '\n';
    this.wroteAny = true;
    if (this.pendingText.length > 65536) this.flushText();
  }

  private flushText(): void {
    if (this.fd === null) this.openExclusive();
    if (this.pendingText.length > 0) writeSync(this.fd!, this.pendingText);
    this.pendingText = '';
  }

  private openExclusive(): void {
    for (;;) {
      this.path = join(this.stagingDir, `${this.prefix}${this.seq++}.inprogress`);
      try {
        this.fd = openSync(this.path, 'wx');
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
  }

  preCommit(checkpointId: number): FileCommittable | null {
    if (!this.wroteAny) return null;
    this.flushText();
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    const committable = { inProgress: this.path, final: join(this.options.directory, `part-${this.subtask}-${checkpointId}`) };
    this.fd = null;
    this.wroteAny = false;
    return committable;
  }

  async commit(committables: readonly FileCommittable[]): Promise<void> {
    for (const c of committables) commitOne(c);
    if (committables.length > 0) {
      fsyncDir(this.options.directory);
      fsyncDir(this.stagingDir);
    }
  }

  dispose(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
    this.pendingText = '';
  }

  close(): void {
    this.dispose();
  }
}

/** Committed part files of a sink directory with the checkpoint each belongs to. */
function committedParts(directory: string): Array<{ name: string; checkpointId: number }> {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: Array<{ name: string; checkpointId: number }> = [];
  for (const name of names) {
    const m = FINAL_NAME.exec(name);
    if (m) out.push({ name, checkpointId: Number(m[2]) });
  }
  return out;
}

/** Writes lines into part files of a directory, exactly once (see the module comment). */
export class FileSink implements TwoPhaseCommitSink<unknown, FileCommittable> {
  /** A two-phase-commit sink. */
  readonly kind = 'two-phase-commit' as const;
  /** Display name of the sink operator. */
  readonly name = 'file-sink';
  /**
   * A sink writing into `options.directory`.
   * @param options the output directory and line format.
   * @throws ConfigError naming `FileSink.directory` when it is not a non-empty string, or `FileSink.format` when it is not a function.
   */
  constructor(private readonly options: FileSinkOptions) {
    // Checked here, where the job is defined: a job module in JavaScript has no types to stop
    // `{ dir: ... }`, and an undefined path would only fail in each attempt's writer.
    const given = options as Partial<Record<keyof FileSinkOptions, unknown>> | null;
    if (typeof given?.directory !== 'string' || given.directory === '') {
      throw new ConfigError('FileSink.directory', `must be the output directory (a non-empty string), got ${JSON.stringify(given?.directory)}`);
    }
    if (given.format !== undefined && typeof given.format !== 'function') throw new ConfigError('FileSink.format', 'must be a function (record) => string');
  }

  /** The output directory (as given). */
  get directory(): string {
    return this.options.directory;
  }

  /** A writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<unknown, FileCommittable> {
    return new FileSinkWriter(this.options);
  }

  /** The highest checkpoint id among the committed part files (null when there are none). */
  async newestCommitted(): Promise<number | null> {
    let newest: number | null = null;
    for (const p of committedParts(this.options.directory)) newest = Math.max(newest ?? 0, p.checkpointId);
    return newest;
  }

  /** Moves the part files of checkpoints after `checkpointId` into `.rolled-back/after-checkpoint-<id>[-k]/`. */
  async rollBackAfter(checkpointId: number): Promise<string> {
    const later = committedParts(this.options.directory).filter((p) => p.checkpointId > checkpointId);
    if (later.length === 0) return `nothing committed after checkpoint ${checkpointId} in ${this.options.directory}`;
    const root = join(this.options.directory, ROLLED_BACK_DIR);
    mkdirSync(root, { recursive: true });
    let target = join(root, `after-checkpoint-${checkpointId}`);
    for (let k = 1; !tryMkdir(target); k++) target = join(root, `after-checkpoint-${checkpointId}-${k}`);
    for (const p of later) renameSync(join(this.options.directory, p.name), join(target, p.name));
    fsyncDir(target);
    fsyncDir(this.options.directory);
    const ids = [...new Set(later.map((p) => p.checkpointId))].sort((a, b) => a - b);
    return `moved ${later.length} committed file(s) of checkpoint(s) ${ids.join(', ')} from ${this.options.directory} to ${target}`;
  }
}

function tryMkdir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** The committed lines in a sink directory (visible files only), files in name order. */
export function readCommittedLines(directory: string): string[] {
  return readdirSync(directory)
    .filter((n) => n.startsWith('part-'))
    .sort()
    .flatMap((n) =>
      readFileSync(join(directory, n), 'utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    );
}
