/**
 * The real FileSink, watched: before each commit it looks at the directory, as an auditor of the
 * external side would. A committable whose final file exists as another file than its in-progress
 * one is about to replace committed output (a second commit with other content); a final file that
 * exists already is a repeat, allowed only on recovery (checker e).
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { FileCommittable, FileSink } from '../../connectors/files/file-sink.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { RecoveryCommits, type CommitLedger } from '../checkers/commit-once.ts';

export function observeFileSink(sink: FileSink, ledger: CommitLedger): TwoPhaseCommitSink<unknown, FileCommittable> {
  return {
    kind: 'two-phase-commit',
    name: sink.name,
    createWriter: () => observeWriter(sink.createWriter(), ledger),
    // The sink-aware recovery rule asks the sink itself.
    newestCommitted: () => sink.newestCommitted(),
    rollBackAfter: (checkpointId) => sink.rollBackAfter(checkpointId),
  };
}

function observeWriter(inner: TwoPhaseCommitWriter<unknown, FileCommittable>, ledger: CommitLedger): TwoPhaseCommitWriter<unknown, FileCommittable> {
  const recovery = new RecoveryCommits();
  let runId = '';
  return {
    open: (ctx: RuntimeContext, pending: readonly FileCommittable[]) => {
      runId = ctx.runId;
      recovery.opened(pending.map((p) => p.final));
      return inner.open(ctx, pending);
    },
    write: (record) => inner.write(record),
    preCommit: (checkpointId) => inner.preCommit(checkpointId),
    commit: (committables) => {
      const mayRepeat = recovery.startCommit();
      for (const c of committables) {
        const staged = inode(c.inProgress);
        const visible = inode(c.final);
        if (staged !== null && visible !== null && staged !== visible)
          ledger.violate(`${c.final} is committed already and ${c.inProgress} is about to replace it`);
        else ledger.committed(c.final, visible !== null, mayRepeat(c.final), checkpointOf(c.final), runId);
      }
      return inner.commit(committables);
    },
    dispose: () => inner.dispose?.(),
    close: () => inner.close?.(),
  };
}

function inode(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}

/** The checkpoint a final file belongs to: `part-<subtask>-<checkpoint>`. */
function checkpointOf(final: string): number {
  return Number(basename(final).split('-').pop());
}
