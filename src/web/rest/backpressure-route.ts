/** `GET /jobs/:id/backpressure`: per subtask, the share of the last sampling interval it spent blocked on output. */
import { backpressureLevel } from '../rate-sampler.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import { round } from './job-routes.ts';
import type { Backpressure, SubtaskBackpressure, VertexBackpressure } from './responses.ts';

/** `GET /jobs/:id/vertices/:vid/backpressure`: one vertex, in Flink's shape for that route. */
export function vertexBackpressure(job: WebJob, vertex: number): VertexBackpressure {
  const all = backpressure(job);
  const v = all.vertices[vertex]!;
  return { status: all.status, backpressureLevel: v.backpressureLevel, 'end-timestamp': all['end-timestamp'], subtasks: v.subtasks };
}

export function backpressure(job: WebJob): Backpressure {
  const { master, sampler } = job;
  const vertices = master.config.graph.vertices.map((v) => {
    const subtasks: SubtaskBackpressure[] = [];
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
