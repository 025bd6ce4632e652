/**
 * The real FileSink, watched: before each commit it looks at the directory, as an auditor of the
 * external side would. A committable whose final file exists while its in-progress file also
 * exists is about to replace committed output (a second commit with other content); a final file
 * that exists alone is a repeat, allowed only on recovery (checker e).
 */
import { existsSync } from 'node:fs';
import type { FileCommittable, FileSink } from '../connectors/files/file-sink.ts';
import type { RuntimeContext } from '../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../runtime/sink.ts';
import { RecoveryCommits, type CommitLedger } from './checkers/commit-once.ts';

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
  return {
    open: (ctx: RuntimeContext, pending: readonly FileCommittable[]) => {
      recovery.opened(pending.map((p) => p.final));
      return inner.open(ctx, pending);
    },
    write: (record) => inner.write(record),
    preCommit: (checkpointId) => inner.preCommit(checkpointId),
    commit: (committables) => {
      const mayRepeat = recovery.startCommit();
      for (const c of committables) {
        const staged = existsSync(c.inProgress);
        const visible = existsSync(c.final);
        if (staged && visible) ledger.violate(`${c.final} is committed already and ${c.inProgress} is about to replace it`);
        else ledger.committed(c.final, visible, mayRepeat(c.final));
      }
      return inner.commit(committables);
    },
    dispose: () => inner.dispose?.(),
    close: () => inner.close?.(),
  };
}
