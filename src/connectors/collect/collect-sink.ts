/**
 * A transactional in-memory sink for tests and examples: each subtask's records of one checkpoint
 * form a transaction that becomes visible in `results()` only when the checkpoint completes.
 * Commits are keyed by transaction id, so committing again after recovery changes nothing.
 */
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';

interface CollectTransaction<T> {
  readonly id: string;
  readonly records: T[];
}

export class CollectSink<T> implements TwoPhaseCommitSink<T, CollectTransaction<T>> {
  readonly kind = 'two-phase-commit' as const;
  private readonly committed = new Map<string, T[]>();
  private readonly order: string[] = [];
  /** How many commit calls arrived for an already committed transaction (recovery re-commits). */
  recommits = 0;

  constructor(readonly name = 'collect') {}

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
        const txn = { id: `${subtask}:${checkpointId}`, records: open };
        open = [];
        return txn;
      },
      commit: async (txns) => {
        for (const txn of txns) {
          if (this.committed.has(txn.id)) {
            this.recommits++;
            continue;
          }
          this.committed.set(txn.id, [...txn.records]);
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
    return this.order.flatMap((id) => this.committed.get(id)!);
  }

  get transactions(): number {
    return this.order.length;
  }
}
