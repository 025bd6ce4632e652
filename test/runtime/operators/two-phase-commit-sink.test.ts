/**
 * The two-phase-commit sink operator on its own, snapshot by snapshot: a transaction is committed once, plus once more only by the writer that restored it; and
 * a checkpoint's notification commits every pre-commit up to it, those of earlier checkpoints
 * whose notification was lost or subsumed included.
 */
import { describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import { TwoPhaseCommitSinkOperator } from '../../../src/runtime/operators/sink-operators.ts';
import type { TwoPhaseCommitWriter } from '../../../src/runtime/sink.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import type { OperatorStateHandle } from '../../../src/storage/handles.ts';
import { operatorContext } from '../../support/operator-context.ts';
import { InlineStreams, inlineReader } from '../../state/helpers.ts';

/** A transaction: the checkpoint that pre-committed it and its records. */
interface Txn {
  readonly id: string;
  readonly records: readonly number[];
}

/** One operator with its writer; every commit call is logged as the ids it commits. */
function sinkSubtask(commits: string[][], restoredSeen: string[][] = []) {
  let records: number[] = [];
  const writer: TwoPhaseCommitWriter<number, Txn> = {
    open: (_ctx, restored) => {
      restoredSeen.push(restored.map((t) => t.id));
    },
    write: (r) => {
      records.push(r);
    },
    preCommit: (id) => {
      const t = { id: `txn-${id}`, records };
      records = [];
      return t;
    },
    commit: async (txns) => {
      commits.push(txns.map((t) => t.id));
    },
  };
  const state = new HeapOperatorStateBackend({ uid: 'out', subtask: 0 });
  const operator = new TwoPhaseCommitSinkOperator(writer as TwoPhaseCommitWriter<unknown, unknown>);
  operator.setup(operatorContext({ uid: 'out', operatorState: state }));
  /** The barrier of checkpoint `id`: pre-commit, then the sync snapshot of operator state. */
  const checkpoint = async (id: number): Promise<OperatorStateHandle | null> => {
    await operator.prepareSnapshotPreBarrier(checkpointId(id));
    operator.snapshotState();
    return state.snapshot(checkpointId(id), new InlineStreams(id)).run();
  };
  return { operator, state, checkpoint };
}

async function restoredSubtask(handle: OperatorStateHandle | null, commits: string[][], restoredSeen: string[][]) {
  const s = sinkSubtask(commits, restoredSeen);
  await s.state.restoreRedistributed([handle], inlineReader(), 0, 1);
  return s;
}

describe('two-phase-commit sink operator: commits repeated on recovery (class 1)', () => {
  it('commits a restored transaction once on open and never again; later notifications commit only what is new', async () => {
    const first: string[][] = [];
    const a = sinkSubtask(first);
    await a.operator.open();
    a.operator.processElement(1);
    await a.checkpoint(1);
    await a.operator.notifyCheckpointComplete(checkpointId(1));
    a.operator.processElement(2);
    const chk2 = await a.checkpoint(2);
    // The job fails before checkpoint 2's notification: txn-2 is pre-committed, not committed.
    expect(first).toEqual([['txn-1']]);

    const second: string[][] = [];
    const restored: string[][] = [];
    const b = await restoredSubtask(chk2, second, restored);
    await b.operator.open();
    expect(restored).toEqual([['txn-2']]);
    expect(second).toEqual([['txn-2']]); // the recovery commit (commits are idempotent)
    b.operator.processElement(3);
    await b.checkpoint(3);
    await b.operator.notifyCheckpointComplete(checkpointId(3));
    b.operator.processElement(4);
    const chk4 = await b.checkpoint(4);
    await b.operator.notifyCheckpointComplete(checkpointId(4));
    expect(second).toEqual([['txn-2'], ['txn-3'], ['txn-4']]);

    // A restore of checkpoint 4 (committed already) repeats only what checkpoint 4 pre-committed.
    const third: string[][] = [];
    const c = await restoredSubtask(chk4, third, []);
    await c.operator.open();
    await c.checkpoint(5);
    await c.operator.notifyCheckpointComplete(checkpointId(5));
    expect(third).toEqual([['txn-4'], ['txn-5']]);
  });

  it('a checkpoint taken after a commit no longer carries the committed transaction', async () => {
    const commits: string[][] = [];
    const a = sinkSubtask(commits);
    await a.operator.open();
    await a.checkpoint(1);
    await a.operator.notifyCheckpointComplete(checkpointId(1));
    const chk2 = await a.checkpoint(2);
    const restored: string[][] = [];
    const b = await restoredSubtask(chk2, [], restored);
    await b.operator.open();
    expect(restored).toEqual([['txn-2']]);
  });
});

describe('two-phase-commit sink operator: a notification commits earlier pre-commits too (class 4)', () => {
  it('the notification of checkpoint 3 commits the pre-commits of 1 and 2, whose notifications were lost, in checkpoint order', async () => {
    const commits: string[][] = [];
    const a = sinkSubtask(commits);
    await a.operator.open();
    for (const id of [1, 2, 3]) {
      a.operator.processElement(id);
      await a.checkpoint(id);
    }
    await a.operator.notifyCheckpointComplete(checkpointId(3));
    expect(commits).toEqual([['txn-1', 'txn-2', 'txn-3']]);
    // A notification arriving late for a subsumed checkpoint commits nothing again.
    await a.operator.notifyCheckpointComplete(checkpointId(2));
    await a.operator.notifyCheckpointComplete(checkpointId(1));
    expect(commits).toEqual([['txn-1', 'txn-2', 'txn-3']]);
  });

  it('does not commit a pre-commit of a newer checkpoint than the one notified', async () => {
    const commits: string[][] = [];
    const a = sinkSubtask(commits);
    await a.operator.open();
    await a.checkpoint(1);
    await a.checkpoint(2);
    await a.operator.notifyCheckpointComplete(checkpointId(1));
    expect(commits).toEqual([['txn-1']]);
    await a.operator.notifyCheckpointComplete(checkpointId(2));
    expect(commits).toEqual([['txn-1'], ['txn-2']]);
  });
});
