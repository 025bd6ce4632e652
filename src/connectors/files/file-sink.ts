/**
 * Exactly-once file sink. Each subtask appends lines to a hidden in-progress file; on the barrier
 * the file is flushed, fsynced and closed (pre-commit) and its name goes into the checkpoint; when
 * the checkpoint completes it is renamed to `part-<subtask>-<checkpoint>` and becomes visible.
 * Renames are idempotent, so recovery re-commits safely.
 *
 * In-progress files are named `part-<subtask>of<parallelism>-a<attempt>-<seq>` and created
 * exclusively, so no writer ever truncates another's pending file. When a subtask starts again at
 * the same parallelism it gets exactly its old pending list back, so it deletes its own leftovers
 * that no completed checkpoint references; after a rescale the old leftovers stay (hidden, never
 * visible as output), because no single subtask can tell which of them another one still commits.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';

export interface FileSinkOptions {
  readonly directory: string;
  /** Turns a record into one line (JSON for non-strings by default). */
  readonly format?: (record: any) => string;
}

export interface FileCommittable {
  readonly inProgress: string;
  readonly final: string;
}

const IN_PROGRESS_DIR = '.in-progress';

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

class FileSinkWriter implements TwoPhaseCommitWriter<unknown, FileCommittable> {
  private fd: number | null = null;
  private path = '';
  private pendingText = '';
  private subtask = 0;
  private parallelism = 1;
  private attempt = 0;
  private seq = 0;
  private wroteAny = false;

  constructor(private readonly options: FileSinkOptions) {}

  private get stagingDir(): string {
    return join(this.options.directory, IN_PROGRESS_DIR);
  }

  async open(ctx: RuntimeContext, pending: readonly FileCommittable[]): Promise<void> {
    this.subtask = ctx.subtaskIndex;
    this.parallelism = ctx.parallelism;
    this.attempt = ctx.attempt;
    mkdirSync(this.stagingDir, { recursive: true });
    const keep = new Set(pending.map((p) => p.inProgress));
    const mine = `part-${this.subtask}of${this.parallelism}-a`;
    for (const name of readdirSync(this.stagingDir)) {
      const full = join(this.stagingDir, name);
      if (name.startsWith(mine) && !keep.has(full)) rmSync(full, { force: true });
    }
  }

  write(record: unknown): void {
    const line = this.options.format ? this.options.format(record) : typeof record === 'string' ? record : JSON.stringify(record);
    this.pendingText += line + '\n';
    this.wroteAny = true;
    if (this.pendingText.length > 65536) this.flushText();
  }

  private flushText(): void {
    if (this.fd === null) {
      this.openExclusive();
    }
    if (this.pendingText.length > 0) writeSync(this.fd!, this.pendingText);
    this.pendingText = '';
  }

  private openExclusive(): void {
    for (;;) {
      this.path = join(this.stagingDir, `part-${this.subtask}of${this.parallelism}-a${this.attempt}-${this.seq++}.inprogress`);
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
    for (const c of committables) {
      if (existsSync(c.inProgress)) {
        renameSync(c.inProgress, c.final);
      } else if (!existsSync(c.final)) {
        throw new StorageError('MISSING_FILE', c.inProgress, `pre-committed file is gone and ${c.final} was never committed`);
      }
    }
    if (committables.length > 0) fsyncDir(this.options.directory);
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

export class FileSink implements TwoPhaseCommitSink<unknown, FileCommittable> {
  readonly kind = 'two-phase-commit' as const;
  readonly name = 'file-sink';
  constructor(private readonly options: FileSinkOptions) {}
  createWriter(): TwoPhaseCommitWriter<unknown, FileCommittable> {
    return new FileSinkWriter(this.options);
  }
}

/** The committed lines in a sink directory (visible files only), files in name order. */
export function readCommittedLines(directory: string): string[] {
  return readdirSync(directory)
    .filter((n) => n.startsWith('part-'))
    .sort()
    .flatMap((n) => readFileSync(join(directory, n), 'utf8').split('\n').filter((l) => l.length > 0));
}
