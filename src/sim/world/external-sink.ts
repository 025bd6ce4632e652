/**
 * A transactional sink over an external system the simulated processes do not own (a database or
 * a log with transactions, as Kafka has). Transactions live on the external side: records are
 * appended as they are written, a pre-commit prepares the transaction, a commit makes it visible.
 * A process death leaves everything there: open transactions with their records, prepared ones,
 * committed ones. Committables name a transaction; they do not carry its records.
 */
import { StorageError } from '../../core/errors.ts';
import type { Scheduler } from '../../core/time.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { RecoveryCommits, type CommitLedger } from '../checkers/commit-once.ts';

interface Transaction {
  readonly name: string;
  readonly uid: string;
  readonly records: string[];
  state: 'open' | 'prepared' | 'committed' | 'rolled-back';
  checkpointId: number | null;
}

export interface ExternalCommittable {
  readonly transaction: string;
  readonly checkpointId: number;
  /** The sink subtask that pre-committed it. */
  readonly subtask: number;
}

/** How long the external system takes to make one transaction visible, on the process's scheduler. */
export interface CommitLatency {
  readonly ms: number;
  readonly scheduler: Scheduler;
}

/** The external system: its transactions outlive every process of a seed. */
export class ExternalTransactionStore {
  private readonly transactions = new Map<string, Transaction>();
  private readonly order: string[] = [];
  /** What rollbacks moved aside, for reports. */
  readonly rolledBack: string[] = [];
  /**
   * Recoveries whose first commit made two or more transactions of one pre-committing subtask
   * visible for the first time: there their commit order shows in the output.
   */
  orderedRecoveryCommits = 0;

  constructor(readonly ledger: CommitLedger) {}

  /** Creates a transaction exclusively; false when the name is taken. */
  begin(name: string, uid: string): boolean {
    if (this.transactions.has(name)) return false;
    this.transactions.set(name, { name, uid, records: [], state: 'open', checkpointId: null });
    return true;
  }

  append(name: string, record: string): void {
    const t = this.transactions.get(name);
    if (t?.state !== 'open') throw new StorageError('STORAGE_IO', `external:${name}`, `transaction is ${t?.state ?? 'unknown'}, not open`);
    t.records.push(record);
  }

  prepare(name: string, checkpointId: number): void {
    const t = this.transactions.get(name)!;
    t.state = 'prepared';
    t.checkpointId = checkpointId;
  }

  isCommitted(name: string): boolean {
    return this.transactions.get(name)?.state === 'committed';
  }

  /** Makes a prepared transaction visible; returns whether it already was. */
  commit(name: string): boolean {
    const t = this.transactions.get(name);
    if (t === undefined || t.state === 'open' || t.state === 'rolled-back') {
      this.ledger.violate(`commit of transaction ${name}, which is ${t?.state ?? 'unknown'}`);
      return true;
    }
    if (t.state === 'committed') return true;
    t.state = 'committed';
    this.order.push(name);
    return false;
  }

  newestCommitted(uid: string): number | null {
    let newest: number | null = null;
    for (const name of this.order) {
      const t = this.transactions.get(name)!;
      if (t.uid === uid && t.state === 'committed') newest = Math.max(newest ?? 0, t.checkpointId!);
    }
    return newest;
  }

  /** Moves the committed transactions of `uid` pre-committed after `checkpointId` out of the visible output. */
  rollBackAfter(uid: string, checkpointId: number): string {
    const moved: string[] = [];
    for (const name of this.order) {
      const t = this.transactions.get(name)!;
      if (t.uid === uid && t.state === 'committed' && t.checkpointId! > checkpointId) {
        t.state = 'rolled-back';
        moved.push(name);
      }
    }
    this.rolledBack.push(...moved);
    return `rolled back ${moved.length} committed transaction(s) of ${uid} after checkpoint ${checkpointId}`;
  }

  /** Committed records in commit order, each with its sink's uid. */
  committed(): Array<{ uid: string; record: string }> {
    return this.order.flatMap((name) => {
      const t = this.transactions.get(name)!;
      return t.state === 'committed' ? t.records.map((record) => ({ uid: t.uid, record })) : [];
    });
  }
}

/** The writer side lives in the process; its names are unique per run so no run reuses another's transaction. */
class ExternalSinkWriter implements TwoPhaseCommitWriter<unknown, ExternalCommittable> {
  private current: string | null = null;
  private prefix = '';
  private runId = '';
  private seq = 0;
  private readonly recovery = new RecoveryCommits();
  private subtask = 0;
  private disposed = false;
  /** Transactions the restored checkpoint carried, until the first commit after open. */
  private restored = new Set<string>();

  constructor(
    private readonly uid: string,
    private readonly store: ExternalTransactionStore,
    private readonly latency: CommitLatency | null,
  ) {}

  open(ctx: RuntimeContext, pending: readonly ExternalCommittable[]): void {
    this.prefix = `${this.uid}-${ctx.subtaskIndex}of${ctx.parallelism}-${ctx.runId}`;
    this.runId = ctx.runId;
    this.subtask = ctx.subtaskIndex;
    this.recovery.opened(pending.map((p) => p.transaction));
    this.restored = new Set(pending.map((p) => p.transaction));
  }

  write(record: unknown): void {
    if (this.current === null) {
      do this.current = `${this.prefix}-${this.seq++}`;
      while (!this.store.begin(this.current, this.uid));
    }
    this.store.append(this.current, typeof record === 'string' ? record : JSON.stringify(record));
  }

  preCommit(checkpointId: number): ExternalCommittable | null {
    if (this.current === null) return null;
    this.store.prepare(this.current, checkpointId);
    const committable = { transaction: this.current, checkpointId, subtask: this.subtask };
    this.current = null;
    return committable;
  }

  /** Commits one after the other; with a latency each takes that long, and a dead process's commits never land. */
  async commit(committables: readonly ExternalCommittable[]): Promise<void> {
    const mayRepeat = this.recovery.startCommit();
    this.countOrdered(committables.filter((c) => this.restored.has(c.transaction)));
    this.restored = new Set();
    for (const c of committables) {
      if (this.latency !== null) await waitMs(this.latency);
      if (this.disposed) return; // cancelled: the request was never sent
      this.store.ledger.committed(c.transaction, this.store.commit(c.transaction), mayRepeat(c.transaction), c.checkpointId, this.runId);
    }
  }

  private countOrdered(committables: readonly ExternalCommittable[]): void {
    const fresh = new Map<number, number>();
    for (const c of committables) if (!this.store.isCommitted(c.transaction)) fresh.set(c.subtask, (fresh.get(c.subtask) ?? 0) + 1);
    if ([...fresh.values()].some((n) => n >= 2)) this.store.orderedRecoveryCommits++;
  }

  dispose(): void {
    this.disposed = true;
    this.current = null; // the open transaction stays on the external side, as after a crash
  }
}

/** The sink object a process builds; the store behind it is the seed's. */
export class ExternalTransactionalSink implements TwoPhaseCommitSink<unknown, ExternalCommittable> {
  readonly kind = 'two-phase-commit' as const;
  constructor(
    readonly name: string,
    private readonly store: ExternalTransactionStore,
    private readonly latency: CommitLatency | null = null,
  ) {}

  createWriter(): TwoPhaseCommitWriter<unknown, ExternalCommittable> {
    return new ExternalSinkWriter(this.name, this.store, this.latency);
  }

  async newestCommitted(): Promise<number | null> {
    return this.store.newestCommitted(this.name);
  }

  async rollBackAfter(checkpointId: number): Promise<string> {
    return this.store.rollBackAfter(this.name, checkpointId);
  }
}

function waitMs(l: CommitLatency): Promise<void> {
  return new Promise((resolve) => l.scheduler.schedule(l.ms, resolve));
}
