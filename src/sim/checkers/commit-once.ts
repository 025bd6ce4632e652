/**
 * Checker (e): each transaction commits once, and only once its checkpoint is durable. A
 * transaction is committed again only by a writer that restored it from a checkpoint, in the
 * commit that follows its restore (a repeat on recovery, counted), or by a writer of a stale HA
 * leader that woke (a commit it was told of before its pause, of a published checkpoint; counted);
 * any other repeat, a commit that
 * changes committed output, a commit of a transaction never prepared, or a first commit before any
 * `_metadata` of its checkpoint or a later one is on the disk is a violation.
 */
export class CommitLedger {
  readonly violations: string[] = [];
  firstCommits = 0;
  /** Repeats by writers that restored the transaction (idempotent re-commits on recovery). */
  recoveryRepeats = 0;
  /**
   * Repeats by a stale HA leader's writers (its process paused past its lease, then woken): a
   * commit of a completed checkpoint it had notified before its pause, which its successor
   * restored and committed already. Idempotent, and never above the published pointer (a first
   * commit there is a violation by `newestDurable`, which the run bounds by the pointer).
   */
  staleRepeats = 0;
  /** Whether a writer of run `runId` (`<process tag>-a<attempt>`) belongs to a stale leader's process; the run sets it. */
  isStaleRun: (runId: string) => boolean = () => false;

  /** `newestDurable` gives the newest checkpoint or savepoint id whose `_metadata` is on the disk. */
  constructor(private readonly newestDurable: () => number = () => Infinity) {}

  /**
   * `key` (of checkpoint `checkpointId`) was made visible (`already` false) or found already
   * visible; `byRecovery` when the writer restored it; `runId` the committing writer's run.
   */
  committed(key: string, already: boolean, byRecovery: boolean, checkpointId: number, runId: string): void {
    if (!already) {
      this.firstCommits++;
      const durable = this.newestDurable();
      if (checkpointId > durable)
        this.violate(`transaction ${key} of checkpoint ${checkpointId} was committed while the newest durable _metadata is of checkpoint ${durable}`);
    } else if (byRecovery) this.recoveryRepeats++;
    else if (this.isStaleRun(runId)) this.staleRepeats++;
    else this.violate(`transaction ${key} was committed again outside recovery`);
  }

  violate(message: string): void {
    if (this.violations.length < 20) this.violations.push(message);
  }
}

/** Which restored transactions a writer may commit again: only in its first commit after open. */
export class RecoveryCommits {
  private restored = new Set<string>();
  private first = false;

  opened(keys: readonly string[]): void {
    this.restored = new Set(keys);
    this.first = true;
  }

  /** Call once per commit call; returns whether `key` may repeat in it. */
  startCommit(): (key: string) => boolean {
    const allowed = this.first ? this.restored : new Set<string>();
    this.first = false;
    this.restored = new Set();
    return (key) => allowed.delete(key);
  }
}

export function checkCommits(ledger: CommitLedger): string[] {
  return ledger.violations.map((v) => `commit: ${v}`);
}
