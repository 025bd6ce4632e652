/**
 * `GET /jobs/:id/changelog` (Weir's own route): per vertex whose keyed operators use the changelog
 * state backend, each subtask's log (bytes pending in its buffer, in flight to storage, uploaded)
 * and materializations (how many, the newest one's age and size), with its totals over every
 * attempt (a restarted subtask's backend counts from zero; the job master folds the ended ones in).
 * Vertices without a changelog backend are left out: a job without one answers no vertices.
 */
import type { ChangelogFigures } from '../../state/changelog/figures.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import type { ChangelogFiguresAnswer, ChangelogVertex, JobChangelog } from './responses.ts';

function answer(f: ChangelogFigures, now: number): ChangelogFiguresAnswer {
  return {
    'pending-bytes': f.pendingBytes,
    'in-flight-bytes': f.inFlightBytes,
    'uploaded-bytes': f.uploadedBytes,
    uploads: f.uploads,
    'upload-retries': f.retries,
    'upload-failures': f.failures,
    materializations: f.materializations,
    'materialization-failures': f.materializationFailures,
    'materialization-age-ms': f.materializedAtMs === null ? null : Math.max(0, Math.round(now - f.materializedAtMs)),
    'materialized-bytes': f.materializedBytes,
    truncations: f.truncations,
    'restores-by-replay': f.restoresByReplay,
  };
}

/** A vertex's totals: sums, but the age is the oldest subtask's (null while a subtask has materialized nothing). */
function totals(subtasks: readonly ChangelogFiguresAnswer[]): ChangelogFiguresAnswer {
  const sum = (k: keyof ChangelogFiguresAnswer): number => subtasks.reduce((n, s) => n + (s[k] ?? 0), 0);
  const ages = subtasks.map((s) => s['materialization-age-ms']);
  return {
    'pending-bytes': sum('pending-bytes'),
    'in-flight-bytes': sum('in-flight-bytes'),
    'uploaded-bytes': sum('uploaded-bytes'),
    uploads: sum('uploads'),
    'upload-retries': sum('upload-retries'),
    'upload-failures': sum('upload-failures'),
    materializations: sum('materializations'),
    'materialization-failures': sum('materialization-failures'),
    'materialization-age-ms': ages.some((a) => a === null) ? null : Math.max(...(ages as number[])),
    'materialized-bytes': sum('materialized-bytes'),
    truncations: sum('truncations'),
    'restores-by-replay': sum('restores-by-replay'),
  };
}

export function jobChangelog(job: WebJob): JobChangelog {
  const { master } = job;
  const now = job.now();
  const vertices: ChangelogVertex[] = [];
  for (const v of master.config.graph.vertices) {
    const subtasks: Array<ChangelogFiguresAnswer & { subtask: number }> = [];
    for (let i = 0; i < v.parallelism; i++) {
      const live = master.tasks.find((t) => t.id.vertex === v.index && t.id.subtask === i);
      const f = master.recordTotals.changelogOf({ vertex: v.index, subtask: i }, live);
      if (f !== null) subtasks.push({ subtask: i, ...answer(f, now) });
    }
    if (subtasks.length > 0) vertices.push({ id: vertexId(v.index), name: v.name, totals: totals(subtasks), subtasks });
  }
  return { now, vertices };
}
