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
}

const PENDING = new ListStateDescriptor<PendingCommit>('pending-commits-v2');
/** Milestone 1 kept pending commits as split list state under this name; still restored. */
const PENDING_V1 = new ListStateDescriptor<PendingCommit>('pending-commits');

/**
 * Two-phase commit: pre-commit on the barrier, keep the committable in operator state, commit on
 * notifyCheckpointComplete. Restored committables belong to a completed checkpoint and are committed
 * again on open (commits are idempotent). They are union state: every subtask sees all of them, so
 * each can tell a dead run's leftovers from what the checkpoint still needs, at any parallelism;
 * subtask i commits the restored committables at positions i, i+p, i+2p, ...
 */
export class TwoPhaseCommitSinkOperator extends AbstractStreamOperator {
  sinkRecordsIn = 0;
  private pending: PendingCommit[] = [];
  private readonly committing = new Set<PendingCommit>();
  private state!: ListState<PendingCommit>;

  constructor(private readonly writer: TwoPhaseCommitWriter<unknown, unknown>) {
    super();
  }

  override async open(): Promise<void> {
    this.state = this.ctx.operatorState.getUnionListState(PENDING);
    const legacy = this.ctx.operatorState.getListState(PENDING_V1);
    const legacyMine = [...legacy.get()].map((p) => p.committable);
    legacy.clear();
    const restored = [...this.state.get()].map((p) => p.committable);
    await this.writer.open(createRuntimeContext(this.ctx), [...restored, ...legacyMine]);
    const { subtaskIndex, parallelism } = this.ctx;
    const mine = [...restored.filter((_, i) => i % parallelism === subtaskIndex), ...legacyMine];
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
    if (committable !== null) this.pending.push({ checkpointId, committable });
    return this.writer.whenPreCommitted?.(checkpointId);
  }

  override snapshotState(): void {
    this.state.update(this.pending);
  }

  /**
   * Commits what the completed checkpoint covers. A committable leaves `pending` only once its
   * commit succeeded: a checkpoint snapshotted while the commit is in flight still carries it, so
   * if the commit fails (the server went away) a restore from that checkpoint commits it again
   * instead of losing it. Committables already being committed are not committed twice at once.
   */
  override async notifyCheckpointComplete(checkpointId: CheckpointId): Promise<void> {
    const due = this.pending.filter((p) => p.checkpointId <= checkpointId && !this.committing.has(p));
    if (due.length === 0) return;
    for (const p of due) this.committing.add(p);
    try {
      await this.writer.commit(due.map((p) => p.committable));
    } finally {
      for (const p of due) this.committing.delete(p);
    }
    const done = new Set(due);
    this.pending = this.pending.filter((p) => !done.has(p));
  }

  override close(): void {
    this.writer.close?.();
  }

  override dispose(): void {
    try {
      this.writer.dispose?.();
    } catch {
      // teardown must not throw
    }
  }
}
