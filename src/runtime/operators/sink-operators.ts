/** Operators at the end of a chain that hand records to sinks. */
import type { CheckpointId } from '../../core/ids.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import type { ListState } from '../../state/state.ts';
import { AbstractStreamOperator } from '../operator.ts';
import type { SinkWriter, TwoPhaseCommitWriter } from '../sink.ts';
import { createRuntimeContext } from './runtime-context.ts';

export class PlainSinkOperator extends AbstractStreamOperator {
  sinkRecordsIn = 0;
  constructor(private readonly writer: SinkWriter<unknown>) {
    super();
  }
  override open(): void {
    this.writer.open?.(createRuntimeContext(this.ctx));
  }
  processElement(record: unknown): void {
    this.sinkRecordsIn++;
    this.writer.write(record);
  }
  override close(): void {
    this.writer.close?.();
  }
}

interface PendingCommit {
  readonly checkpointId: number;
  readonly committable: unknown;
  /**
   * The subtask that pre-committed it. Absent in state written before commit order was kept (those
   * committables are all committed by subtask 0, in their stored order).
   */
  readonly subtask?: number;
}

const PENDING = new ListStateDescriptor<PendingCommit>('pending-commits-v2');
/** Milestone 1 kept pending commits as split list state under this name; still restored. */
const PENDING_V1 = new ListStateDescriptor<PendingCommit>('pending-commits');

/**
 * The restored committables subtask `subtaskIndex` of `parallelism` commits, in the order to commit
 * them: those pre-committed by a subtask `s` with `s mod parallelism = subtaskIndex`, by
 * checkpoint. All transactions one subtask pre-committed are committed by one subtask in checkpoint
 * order, so a key's output (a keyed stream reaches one sink subtask) becomes visible in the order it
 * was written — an upsert of checkpoint 4 never lands before the one of checkpoint 3.
 */
export function restoredCommitsOf(restored: readonly PendingCommit[], subtaskIndex: number, parallelism: number): PendingCommit[] {
  return restored.filter((p) => (p.subtask ?? 0) % parallelism === subtaskIndex).sort((a, b) => a.checkpointId - b.checkpointId);
}

/**
 * Two-phase commit: pre-commit on the barrier, keep the committable in operator state, commit on
 * notifyCheckpointComplete. Restored committables belong to a completed checkpoint and are committed
 * again on open (commits are idempotent). They are union state: every subtask sees all of them, so
 * each can tell a dead run's leftovers from what the checkpoint still needs, at any parallelism;
 * each is committed again by one subtask (`restoredCommitsOf`). Commits run one after the other,
 * in checkpoint order: a completion that arrives while an earlier commit is in flight waits for it.
 */
export class TwoPhaseCommitSinkOperator extends AbstractStreamOperator {
  sinkRecordsIn = 0;
  private pending: PendingCommit[] = [];
  /** The commits in flight, one after the other; rejected for good once one failed. */
  private commits: Promise<void> = Promise.resolve();
  private state!: ListState<PendingCommit>;
  /** Torn down (cancelled, failed, or its task manager lost its job master): no commit starts any more. */
  private disposed = false;

  constructor(private readonly writer: TwoPhaseCommitWriter<unknown, unknown>) {
    super();
  }

  override async open(): Promise<void> {
    this.state = this.ctx.operatorState.getUnionListState(PENDING);
    const legacy = this.ctx.operatorState.getListState(PENDING_V1);
    const legacyMine = [...legacy.get()].map((p) => p.committable);
    legacy.clear();
    const restored = [...this.state.get()];
    await this.writer.open(createRuntimeContext(this.ctx), [...restored.map((p) => p.committable), ...legacyMine]);
    const { subtaskIndex, parallelism } = this.ctx;
    const mine = [...restoredCommitsOf(restored, subtaskIndex, parallelism).map((p) => p.committable), ...legacyMine];
    if (mine.length > 0) await this.writer.commit(mine);
    this.pending = [];
    this.state.clear();
  }

  processElement(record: unknown): void {
    this.sinkRecordsIn++;
    this.writer.write(record);
  }

  override prepareSnapshotPreBarrier(checkpointId: CheckpointId): Promise<void> | void {
    const committable = this.writer.preCommit(checkpointId);
    if (committable !== null) this.pending.push({ checkpointId, committable, subtask: this.ctx.subtaskIndex });
    return this.writer.whenPreCommitted?.(checkpointId);
  }

  override snapshotState(): void {
    this.state.update(this.pending);
  }

  /**
   * Commits what the completed checkpoint covers, after any commit still in flight. A committable
   * leaves `pending` only once its commit succeeded: a checkpoint snapshotted while the commit is
   * in flight still carries it, so if the commit fails (the server went away) a restore from that
   * checkpoint commits it again instead of losing it.
   */
  override notifyCheckpointComplete(checkpointId: CheckpointId): Promise<void> {
    // After a failed commit none runs any more: the failure fails the subtask, and its restore commits again.
    const run = this.commits.then(() => this.commitUpTo(checkpointId));
    this.commits = run;
    return run;
  }

  private async commitUpTo(checkpointId: CheckpointId): Promise<void> {
    // A commit queued behind one in flight when the subtask was torn down never starts: the
    // checkpoint still lists it, so the attempt that restores it commits it; a zombie must not.
    if (this.disposed) return;
    const due = this.pending.filter((p) => p.checkpointId <= checkpointId);
    if (due.length === 0) return;
    await this.writer.commit(due.map((p) => p.committable));
    const done = new Set(due);
    this.pending = this.pending.filter((p) => !done.has(p));
  }

  override close(): void {
    this.writer.close?.();
  }

  override dispose(): void {
    this.disposed = true;
    try {
      this.writer.dispose?.();
    } catch {
      // teardown must not throw
    }
  }
}
