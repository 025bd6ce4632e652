/**
 * Record counts across attempts: a restarted subtask counts from zero, so the job master folds the
 * counts of every torn-down attempt into totals here, per subtask. The subtasks of an attempt being
 * torn down still count until they stopped; their live counts are read until then, so a total never
 * goes down.
 */
import type { TaskId } from '../../core/ids.ts';
import { taskKey } from '../../core/ids.ts';
import type { TaskHandle } from './attempt-deployment.ts';
import { afterAttempt, type ChangelogFigures, overAttempts } from '../../state/changelog/figures.ts';

/** What a subtask counted (all attempts, or one). */
export interface SubtaskRecordCounts {
  /** Records a source subtask emitted (its input, read from outside). */
  readonly sourceRecordsOut: number;
  /** Records a sink received. */
  readonly sinkRecordsIn: number;
  /** Records taken from input channels. */
  readonly recordsIn: number;
  /** Records sent downstream. */
  readonly recordsWritten: number;
}

export const NO_RECORDS: SubtaskRecordCounts = { sourceRecordsOut: 0, sinkRecordsIn: 0, recordsIn: 0, recordsWritten: 0 };

function plus(a: SubtaskRecordCounts, b: SubtaskRecordCounts): SubtaskRecordCounts {
  return {
    sourceRecordsOut: a.sourceRecordsOut + b.sourceRecordsOut,
    sinkRecordsIn: a.sinkRecordsIn + b.sinkRecordsIn,
    recordsIn: a.recordsIn + b.recordsIn,
    recordsWritten: a.recordsWritten + b.recordsWritten,
  };
}

/** The counts of ended attempts, per subtask; `of(id, live)` adds the running attempt's. */
export class RecordTotals {
  private readonly ended = new Map<string, SubtaskRecordCounts>();
  /** The changelog figures of ended attempts, per subtask (counters summed; the newest materialization). */
  private readonly endedChangelog = new Map<string, ChangelogFigures>();
  /** Subtasks of torn-down attempts that have not stopped yet: still read live. */
  private readonly stopping = new Set<readonly TaskHandle[]>();

  /** The attempt of `tasks` is being torn down; `stopped` resolves once every subtask stopped. */
  retire(tasks: readonly TaskHandle[], stopped: Promise<void>): void {
    if (tasks.length === 0) return;
    this.stopping.add(tasks);
    const fold = () => {
      if (!this.stopping.delete(tasks)) return;
      for (const t of tasks) {
        const key = taskKey(t.id);
        this.ended.set(key, plus(this.ended.get(key) ?? NO_RECORDS, t));
        const changelog = afterAttempt(this.endedChangelog.get(key) ?? null, t.changelog);
        if (changelog !== null) this.endedChangelog.set(key, changelog);
      }
    };
    void stopped.then(fold, fold);
  }

  /** Counts of subtask `id` over every attempt, `live` being its handle in the running attempt (if any). */
  of(id: TaskId, live: TaskHandle | undefined): SubtaskRecordCounts {
    let sum = this.ended.get(taskKey(id)) ?? NO_RECORDS;
    for (const tasks of this.stopping) {
      const t = tasks.find((x) => x.id.vertex === id.vertex && x.id.subtask === id.subtask);
      if (t !== undefined) sum = plus(sum, t);
    }
    return live === undefined ? sum : plus(sum, live);
  }

  /** The changelog figures of subtask `id` over every attempt (null: it never used the changelog backend); `live` as for `of`. */
  changelogOf(id: TaskId, live: TaskHandle | undefined): ChangelogFigures | null {
    let ended = this.endedChangelog.get(taskKey(id)) ?? null;
    for (const tasks of this.stopping) {
      const t = tasks.find((x) => x.id.vertex === id.vertex && x.id.subtask === id.subtask);
      if (t !== undefined) ended = afterAttempt(ended, t.changelog);
    }
    return overAttempts(ended, live?.changelog ?? null);
  }

  /** The job's counts over every attempt: summed over every subtask, `running` being the running attempt's handles. */
  job(running: readonly TaskHandle[]): SubtaskRecordCounts {
    let sum = NO_RECORDS;
    for (const c of this.ended.values()) sum = plus(sum, c);
    for (const tasks of this.stopping) for (const t of tasks) sum = plus(sum, t);
    for (const t of running) sum = plus(sum, t);
    return sum;
  }
}
