/**
 * A transactional in-memory sink for tests and examples: each subtask's records of one checkpoint
 * form a transaction that becomes visible in `results()` only when the checkpoint completes.
 * Commits are keyed by transaction id, so committing again after recovery changes nothing.
 */
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';

/** The committable of a `CollectSink`: one subtask's records of one checkpoint. */
export interface CollectTransaction<T> {
  /** `<subtask>:<checkpoint>`: committing the same id again changes nothing. */
  readonly id: string;
  /** The checkpoint it belongs to. */
  readonly checkpointId: number;
  /** Its records, in order. */
  readonly records: T[];
}

/** A transactional in-memory sink (see the module comment); it can tell and roll back what it committed. */
export class CollectSink<T> implements TwoPhaseCommitSink<T, CollectTransaction<T>> {
  /** A two-phase-commit sink. */
  readonly kind = 'two-phase-commit' as const;
  private readonly committed = new Map<string, { checkpointId: number; records: T[] }>();
  private order: string[] = [];
  /** Records of transactions taken back by `rollBackAfter`, in the order they had been committed. */
  readonly rolledBack: T[] = [];
  /** How many commit calls arrived for an already committed transaction (recovery re-commits). */
  recommits = 0;

  /**
   * A sink with nothing committed yet.
   * @param name display name of the sink operator; default `'collect'`.
   */
  constructor(readonly name = 'collect') {}

  /** A writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<T, CollectTransaction<T>> {
    let open: T[] = [];
    let subtask = 0;
    return {
      open: (ctx: RuntimeContext) => {
        subtask = ctx.subtaskIndex;
        open = [];
      },
      write: (record) => {
        open.push(record);
      },
      preCommit: (checkpointId) => {
        if (open.length === 0) return null;
        const txn = { id: `${subtask}:${checkpointId}`, checkpointId, records: open };
        open = [];
        return txn;
      },
      commit: async (txns) => {
        for (const txn of txns) {
          if (this.committed.has(txn.id)) {
            this.recommits++;
            continue;
          }
          this.committed.set(txn.id, { checkpointId: txn.checkpointId, records: [...txn.records] });
          this.order.push(txn.id);
        }
      },
      dispose: () => {
        open = [];
      },
    };
  }

  /** Every committed record, transaction by transaction in commit order. */
  results(): T[] {
    return this.order.flatMap((id) => this.committed.get(id)!.records);
  }

  /** The highest checkpoint id among the committed transactions (null when there are none). */
  async newestCommitted(): Promise<number | null> {
    let newest: number | null = null;
    for (const txn of this.committed.values()) newest = Math.max(newest ?? 0, txn.checkpointId);
    return newest;
  }

  /** Takes back the transactions of checkpoints after `checkpointId` (kept in `rolledBack`). */
  async rollBackAfter(checkpointId: number): Promise<string> {
    const later = this.order.filter((id) => this.committed.get(id)!.checkpointId > checkpointId);
    for (const id of later) {
      this.rolledBack.push(...this.committed.get(id)!.records);
      this.committed.delete(id);
    }
    this.order = this.order.filter((id) => this.committed.has(id));
    return `took back ${later.length} committed transaction(s) of checkpoints after ${checkpointId}`;
  }

  /** How many transactions are committed. */
  get transactions(): number {
    return this.order.length;
  }
}
