/**
 * The changelog state backend's series on `/metrics`, from the same figures as `GET
 * /jobs/:id/changelog` (totals over every attempt): counters follow the totals (a total never goes
 * down: the job master folds a restarted subtask's ended attempts in), gauges show the same
 * answer, read once before each scrape. Labels as the record series: vertex, vertex_name, subtask. A job without the changelog
 * backend has none of these series.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { jobChangelog } from './rest/changelog-route.ts';
import type { ChangelogFiguresAnswer, JobChangelog } from './rest/responses.ts';
import type { WebJob } from './web-job.ts';

type Label = 'vertex' | 'vertex_name' | 'subtask';
const labelNames: readonly Label[] = ['vertex', 'vertex_name', 'subtask'];

/** Counter series: the REST figure each follows. */
const COUNTERS: ReadonlyArray<readonly [keyof ChangelogFiguresAnswer, string, string]> = [
  ['uploaded-bytes', 'weir_changelog_uploaded_bytes_total', "Bytes of a subtask's state-change log uploaded to checkpoint storage."],
  ['uploads', 'weir_changelog_uploads_total', 'Log segments a subtask uploaded.'],
  ['upload-retries', 'weir_changelog_upload_retries_total', 'Segment uploads tried again after a failure or timeout.'],
  ['upload-failures', 'weir_changelog_upload_failures_total', 'Segment uploads that failed every attempt.'],
  ['materializations', 'weir_changelog_materializations_total', 'Materializations (snapshots of the wrapped backend) a subtask finished.'],
  ['materialization-failures', 'weir_changelog_materialization_failures_total', 'Materializations that failed.'],
  ['truncations', 'weir_changelog_truncations_total', 'Log segments let go after a materialization.'],
];

/** Gauge series: the REST figure each shows, and its scale. */
const GAUGES: ReadonlyArray<readonly [keyof ChangelogFiguresAnswer, string, string, number]> = [
  ['pending-bytes', 'weir_changelog_pending_bytes', "Bytes of changes in a subtask's log buffer, not sealed into a batch yet.", 1],
  ['in-flight-bytes', 'weir_changelog_in_flight_bytes', "Bytes of a subtask's sealed log batches being uploaded.", 1],
  [
    'materialization-age-ms',
    'weir_changelog_materialization_age_seconds',
    "Seconds since a subtask's newest materialization finished (absent before the first).",
    1 / 1000,
  ],
  ['materialized-bytes', 'weir_changelog_materialized_bytes', "State bytes of a subtask's newest materialization.", 1],
];

export class ChangelogMetrics {
  private readonly counters: ReadonlyArray<readonly [keyof ChangelogFiguresAnswer, Counter<Label>]>;
  private readonly last = new Map<string, number>();
  /** The REST answer read by `update` (before each scrape), which the gauges then show: one answer per scrape. */
  private latest: JobChangelog = { now: 0, vertices: [] };

  constructor(
    private readonly job: WebJob,
    registers: Registry[],
  ) {
    this.counters = COUNTERS.map(([figure, name, help]) => [figure, new Counter({ name, help, labelNames, registers })] as const);
    for (const [figure, name, help, scale] of GAUGES) {
      const metrics = this;
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { labels, figures } of metrics.subtasks()) {
            const value = figures[figure];
            if (typeof value === 'number') this.set(labels, value * scale);
          }
        },
      });
    }
  }

  /** Brings the counters up to the totals (before each scrape). */
  update(): void {
    this.latest = jobChangelog(this.job);
    for (const { labels, figures } of this.subtasks()) {
      for (const [figure, counter] of this.counters) {
        const key = `${figure}/${labels.vertex}/${labels.subtask}`;
        const total = figures[figure] as number;
        const last = this.last.get(key) ?? 0;
        if (total > last) counter.inc(labels, total - last);
        this.last.set(key, Math.max(last, total));
      }
    }
  }

  private *subtasks(): Generator<{ labels: Record<Label, string>; figures: ChangelogFiguresAnswer }> {
    for (const v of this.latest.vertices) {
      for (const s of v.subtasks) yield { labels: { vertex: v.id, vertex_name: v.name, subtask: String(s.subtask) }, figures: s };
    }
  }
}
