/**
 * Records in and out of each subtask as the REST API, the dashboard and `/metrics` show them: over
 * every attempt (the job master's totals) and in the running attempt. A source's records in are the
 * records it read from outside; everyone else's are the records taken from input channels.
 */
import type { TaskHandle } from '../cluster/job-master/attempt-deployment.ts';
import type { SubtaskRecordCounts } from '../cluster/job-master/record-totals.ts';
import type { TaskId } from '../core/ids.ts';
import type { WebJob } from './web-job.ts';

export interface InOut {
  readonly recordsIn: number;
  readonly recordsOut: number;
}

export interface SubtaskRecords {
  readonly id: TaskId;
  /** Over every attempt. */
  readonly total: InOut;
  /** In the running attempt (zero while the job restarts). */
  readonly attempt: InOut;
}

const inOut = (c: SubtaskRecordCounts, isSource: boolean): InOut => ({
  recordsIn: isSource ? c.sourceRecordsOut : c.recordsIn,
  recordsOut: c.recordsWritten,
});

/** Every subtask of vertex `vertex` (all of its parallelism, running or not), with its counts. */
export function vertexRecords(job: WebJob, vertex: number): SubtaskRecords[] {
  const v = job.master.config.graph.vertices[vertex]!;
  const live = new Map<number, TaskHandle>();
  for (const t of job.master.tasks) if (t.id.vertex === vertex) live.set(t.id.subtask, t);
  const out: SubtaskRecords[] = [];
  for (let i = 0; i < v.parallelism; i++) {
    const t = live.get(i);
    const id = t?.id ?? { vertex, subtask: i };
    out.push({
      id,
      total: inOut(job.master.recordTotals.of(id, t), v.isSource),
      attempt: t === undefined ? { recordsIn: 0, recordsOut: 0 } : inOut(t, v.isSource),
    });
  }
  return out;
}
