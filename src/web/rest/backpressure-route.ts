/** `GET /jobs/:id/backpressure`: per subtask, the share of the last sampling interval it spent blocked on output. */
import { backpressureLevel } from '../rate-sampler.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import { round } from './job-routes.ts';

/** `GET /jobs/:id/vertices/:vid/backpressure`: one vertex, in Flink's shape for that route. */
export function vertexBackpressure(job: WebJob, vertex: number): Record<string, unknown> {
  const all = backpressure(job) as { status: string; 'end-timestamp': number; vertices: Array<Record<string, unknown>> };
  const v = all.vertices[vertex]!;
  return { status: all.status, backpressureLevel: v.backpressureLevel, 'end-timestamp': all['end-timestamp'], subtasks: v.subtasks };
}

export function backpressure(job: WebJob): Record<string, unknown> {
  const { master, sampler } = job;
  const vertices = master.config.graph.vertices.map((v) => {
    const subtasks = [];
    let max = 0;
    for (let i = 0; i < v.parallelism; i++) {
      const ratio = round(sampler.ratesOf(v.index, i).backpressuredRatio);
      max = Math.max(max, ratio);
      subtasks.push({ subtask: i, backPressuredRatio: ratio, backpressureLevel: backpressureLevel(ratio) });
    }
    return { id: vertexId(v.index), name: v.name, backpressureLevel: backpressureLevel(max), maxBackPressuredRatio: max, subtasks };
  });
  return { status: sampler.sampledAtMs === null ? 'deprecated' : 'ok', 'end-timestamp': sampler.sampledAtMs ?? job.now(), vertices };
}
