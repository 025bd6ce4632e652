/**
 * `GET /jobs/:id/changelog` (Weir's own route): per vertex whose keyed operators use the changelog
 * state backend, each subtask's log (bytes pending in its buffer, in flight to storage, uploaded)
 * and materializations (how many, the newest one's age and size), with its totals over every
 * attempt (a restarted subtask's backend counts from zero; the job master folds the ended ones in).
 * Vertices without a changelog backend are left out: a job without one answers no vertices.
 */
import { addChangelogFigures, type ChangelogFigures } from '../../state/changelog/figures.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import type { ChangelogFiguresAnswer, ChangelogVertex, JobChangelog } from './responses.ts';

/** `clockNow`: the job master's Clock.now(), the clock of `materializedAtMs` (not the wall clock). */
function answer(f: ChangelogFigures, clockNow: number): ChangelogFiguresAnswer {
  return {
    'pending-bytes': f.pendingBytes,
    'in-flight-bytes': f.inFlightBytes,
    'uploaded-bytes': f.uploadedBytes,
    uploads: f.uploads,
    'upload-retries': f.retries,
    'upload-failures': f.failures,
    materializations: f.materializations,
    'materialization-failures': f.materializationFailures,
    'materialization-age-ms': f.materializedAtMs === null ? null : Math.max(0, Math.round(clockNow - f.materializedAtMs)),
    'materialized-bytes': f.materializedBytes,
    truncations: f.truncations,
    'restores-by-replay': f.restoresByReplay,
  };
}

/** A vertex's totals: its subtasks' figures added up, but the age is the oldest subtask's (null while a subtask has materialized nothing). */
function totals(subtasks: readonly ChangelogFigures[], clockNow: number): ChangelogFiguresAnswer {
  const sum = subtasks.reduce<ChangelogFigures | null>(addChangelogFigures, null)!;
  const at = subtasks.map((f) => f.materializedAtMs);
  return answer({ ...sum, materializedAtMs: at.some((t) => t === null) ? null : Math.min(...(at as number[])) }, clockNow);
}

export function jobChangelog(job: WebJob): JobChangelog {
  const { master } = job;
  const now = job.now();
  const clockNow = master.clockNow();
  const vertices: ChangelogVertex[] = [];
  for (const v of master.config.graph.vertices) {
    const figures: ChangelogFigures[] = [];
    const subtasks: Array<ChangelogFiguresAnswer & { subtask: number }> = [];
    for (let i = 0; i < v.parallelism; i++) {
      const live = master.tasks.find((t) => t.id.vertex === v.index && t.id.subtask === i);
      const f = master.recordTotals.changelogOf({ vertex: v.index, subtask: i }, live);
      if (f === null) continue;
      figures.push(f);
      subtasks.push({ subtask: i, ...answer(f, clockNow) });
    }
    if (subtasks.length > 0) vertices.push({ id: vertexId(v.index), name: v.name, totals: totals(figures, clockNow), subtasks });
  }
  return { now, vertices };
}
