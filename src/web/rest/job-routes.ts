/** `GET /jobs` and `GET /jobs/:id`: the job, its graph and per-vertex figures, in Flink's shapes. */
import type { TaskStatus } from '../../runtime/stream-task.ts';
import { vertexRecords } from '../record-counts.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import type { JobDetails, JobExceptions, JobsList, JobVertex } from './responses.ts';

export function jobsList(job: WebJob): JobsList {
  return { jobs: [{ id: job.master.config.jobId, status: job.master.metrics().status }] };
}

/** A vertex is as far as its least advanced subtask (Flink's aggregation, simplified). */
function vertexStatus(statuses: readonly TaskStatus[], jobStatus: string): string {
  if (statuses.length === 0) return jobStatus === 'RESTARTING' ? 'RESTARTING' : jobStatus;
  for (const s of ['FAILED', 'CANCELED', 'CREATED', 'RUNNING'] as const) if (statuses.includes(s)) return s;
  return 'FINISHED';
}

export function jobDetails(job: WebJob): JobDetails {
  const { master } = job;
  const { graph, jobId, name } = master.config;
  const m = master.metrics();
  const now = job.now();
  const vertices = graph.vertices.map((v): JobVertex => {
    const tasks = master.tasks.filter((t) => t.id.vertex === v.index);
    const total = { in: 0, out: 0 };
    const attempt = { in: 0, out: 0 };
    for (const r of vertexRecords(job, v.index)) {
      total.in += r.total.recordsIn;
      total.out += r.total.recordsOut;
      attempt.in += r.attempt.recordsIn;
      attempt.out += r.attempt.recordsOut;
    }
    let inRate = 0;
    let outRate = 0;
    let bpMax = 0;
    for (const t of tasks) {
      const r = job.sampler.ratesOf(t.id.vertex, t.id.subtask);
      inRate += r.recordsInPerSec;
      outRate += r.recordsOutPerSec;
      bpMax = Math.max(bpMax, r.backpressuredRatio);
    }
    const statusCounts: Record<string, number> = {};
    for (const t of tasks) statusCounts[t.status] = (statusCounts[t.status] ?? 0) + 1;
    return {
      id: vertexId(v.index),
      name: v.name,
      parallelism: v.parallelism,
      maxParallelism: v.maxParallelism,
      status: vertexStatus(
        tasks.map((t) => t.status),
        m.status,
      ),
      operators: v.chain.map((n) => ({ uid: n.uid, name: n.name })),
      tasks: statusCounts,
      metrics: {
        'read-records': total.in,
        'write-records': total.out,
        'read-records-attempt': attempt.in,
        'write-records-attempt': attempt.out,
        'read-records-per-second': round(inRate),
        'write-records-per-second': round(outRate),
        'backpressured-ratio-max': round(bpMax),
      },
    };
  });
  return {
    jid: jobId,
    name,
    state: m.status,
    'start-time': master.startedAtMs,
    // A job that ended keeps the figures of its end (Flink's end-time and duration).
    'end-time': master.endedAtMs ?? -1,
    duration: (master.endedAtMs ?? now) - master.startedAtMs,
    now,
    attempt: m.attempt,
    restarts: master.restartCount,
    'restored-from': master.restoredFrom,
    'leader-epoch': master.leaderEpoch,
    'records-in': m.recordsInTotal,
    'records-out': m.recordsOutTotal,
    'records-in-attempt': m.recordsIn,
    'records-out-attempt': m.recordsOut,
    vertices,
    plan: {
      jid: jobId,
      name,
      nodes: graph.vertices.map((v) => ({
        id: vertexId(v.index),
        operator: v.name,
        parallelism: v.parallelism,
        inputs: v.inputs.map((e, num) => ({ num, id: vertexId(e.source), ship_strategy: e.partitioner.type.toUpperCase(), input: e.input })),
      })),
    },
    exceptions: master.exceptions.map((e) => ({ timestamp: e.atMs, attempt: e.attempt, exception: e.message, restarted: e.restarted })),
  };
}

/** `GET /jobs/:id/exceptions`: the failures of every attempt, oldest first. */
export function jobExceptions(job: WebJob): JobExceptions {
  return { exceptions: jobDetails(job).exceptions };
}

export const round = (x: number): number => Math.round(x * 1000) / 1000;
