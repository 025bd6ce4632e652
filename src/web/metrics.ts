/**
 * `/metrics`: the job's figures in Prometheus' text format, with prom-client on a registry of our
 * own (never the library's global one). Record counters are the job master's totals over every
 * attempt (a restarted subtask counts from zero; the master keeps what ended attempts counted).
 * Histograms observe each checkpoint once, when a scrape or a sample first sees it finished.
 * Task managers' data bytes are counters over each task manager's life: one replaced by a new
 * process starts from zero again, which Prometheus reads as a counter reset.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobStatus } from '../cluster/job-master/job-events.ts';
import type { TaskManagerState, TaskManagerStatus } from '../cluster/job-master/task-manager-roster.ts';
import { vertexRecords } from './record-counts.ts';
import { ChangelogMetrics } from './changelog-metrics.ts';
import { vertexId, type WebJob } from './web-job.ts';

const STATUSES: readonly JobStatus[] = ['CREATED', 'RUNNING', 'RESTARTING', 'FINISHED', 'FAILED', 'CANCELED'];
const TM_STATES: readonly TaskManagerState[] = ['starting', 'running', 'stopping', 'dead', 'stopped'];
const TM_LABELS = ['taskmanager', 'host'] as const;
type TmLabel = (typeof TM_LABELS)[number];

const tmLabels = (t: TaskManagerStatus): Record<TmLabel, string> => ({ taskmanager: String(t.index), host: t.description.host });

export class JobMetricsExporter {
  readonly registry = new Registry();
  private readonly lastCounts = new Map<string, { in: number; out: number }>();
  /** Finished checkpoints already counted (ids in the coordinator's bounded history). */
  private observed = new Set<number>();
  private restartsSeen = 0;
  private readonly recordsIn: Counter<'vertex' | 'vertex_name' | 'subtask'>;
  private readonly recordsOut: Counter<'vertex' | 'vertex_name' | 'subtask'>;
  private readonly checkpoints: Counter<'status'>;
  private readonly restarts: Counter;
  private readonly duration: Histogram;
  private readonly size: Histogram;
  private readonly alignment: Histogram;
  private readonly tmBytesSent: Counter<TmLabel>;
  private readonly tmBytesReceived: Counter<TmLabel>;
  /** The bytes each task manager reported at the last update, by its labels. */
  private readonly lastTmBytes = new Map<string, { sent: number; received: number }>();
  private readonly changelog: ChangelogMetrics;

  constructor(private readonly job: WebJob) {
    const registers = [this.registry];
    const labelNames = ['vertex', 'vertex_name', 'subtask'] as const;
    this.registry.setDefaultLabels({ job_id: job.master.config.jobId });
    this.recordsIn = new Counter({ name: 'weir_records_in_total', help: 'Records a subtask took in (a source: records it read).', labelNames, registers });
    this.recordsOut = new Counter({ name: 'weir_records_out_total', help: 'Records a subtask sent downstream.', labelNames, registers });
    this.changelog = new ChangelogMetrics(job, registers);
    this.checkpoints = new Counter({
      name: 'weir_checkpoints_total',
      help: 'Checkpoints and savepoints that finished, by status.',
      labelNames: ['status'],
      registers,
    });
    this.restarts = new Counter({ name: 'weir_restarts_total', help: 'Restarts of the job after failures.', registers });
    this.duration = new Histogram({
      name: 'weir_checkpoint_duration_seconds',
      help: 'Completed checkpoints: trigger to durable metadata.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.size = new Histogram({
      name: 'weir_checkpoint_size_bytes',
      help: 'Completed checkpoints: bytes persisted by all subtasks.',
      buckets: [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
      registers,
    });
    this.alignment = new Histogram({
      name: 'weir_checkpoint_alignment_seconds',
      help: 'Per subtask of a completed checkpoint: first barrier to last barrier on its inputs.',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.tmBytesSent = new Counter({
      name: 'weir_taskmanager_data_sent_bytes_total',
      help: 'Payload bytes of the data frames a task manager sent to other task managers, over its life.',
      labelNames: TM_LABELS,
      registers,
    });
    this.tmBytesReceived = new Counter({
      name: 'weir_taskmanager_data_received_bytes_total',
      help: 'Payload bytes of the data frames a task manager received from other task managers, over its life.',
      labelNames: TM_LABELS,
      registers,
    });
    this.taskManagerGauges(registers);
    const rateLabels = ['vertex', 'vertex_name'] as const;
    new Gauge({
      name: 'weir_records_in_per_second',
      help: 'Records per second a vertex took in over the last sampling interval.',
      labelNames: rateLabels,
      registers,
      collect: () => this.perVertexRate('in'),
    });
    new Gauge({
      name: 'weir_records_out_per_second',
      help: 'Records per second a vertex sent over the last sampling interval.',
      labelNames: rateLabels,
      registers,
      collect: () => this.perVertexRate('out'),
    });
    const exporter = this;
    new Gauge({
      name: 'weir_backpressured_ratio',
      help: 'Share of the last sampling interval a subtask spent blocked on output (0..1).',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const t of exporter.job.master.tasks) {
          const v = exporter.job.master.config.graph.vertices[t.id.vertex]!;
          this.set(
            { vertex: vertexId(v.index), vertex_name: v.name, subtask: String(t.id.subtask) },
            exporter.job.sampler.ratesOf(v.index, t.id.subtask).backpressuredRatio,
          );
        }
      },
    });
    new Gauge({
      name: 'weir_last_checkpoint_age_seconds',
      help: 'Seconds since the latest completed checkpoint or savepoint completed (absent before the first).',
      registers,
      collect() {
        this.reset();
        const last = exporter.job.master.metrics().lastCheckpoint;
        if (last !== null) this.set((exporter.job.now() - (last.triggeredAtMs + last.durationMs)) / 1000);
      },
    });
    new Gauge({
      name: 'weir_job_status',
      help: 'The job status: 1 for the current one.',
      labelNames: ['status'],
      registers,
      collect() {
        const now = exporter.job.master.metrics().status;
        for (const s of STATUSES) this.set({ status: s }, s === now ? 1 : 0);
      },
    });
    new Gauge({
      name: 'weir_job_uptime_seconds',
      help: 'Seconds since the job master started; frozen when the job ended (FINISHED, CANCELED or FAILED).',
      registers,
      collect() {
        const { master } = exporter.job;
        this.set(((master.endedAtMs ?? exporter.job.now()) - master.startedAtMs) / 1000);
      },
    });
  }

  /** Brings counters and histograms up to date (called on each sample and before each scrape). */
  update(): void {
    const { master } = this.job;
    // The job master's totals over every attempt: monotonic, and equal to the REST API's records in and out.
    for (const v of master.config.graph.vertices) {
      for (const r of vertexRecords(this.job, v.index)) {
        const labels = { vertex: vertexId(v.index), vertex_name: v.name, subtask: String(r.id.subtask) };
        const key = `${v.index}/${r.id.subtask}`;
        const last = this.lastCounts.get(key) ?? { in: 0, out: 0 };
        this.recordsIn.inc(labels, Math.max(0, r.total.recordsIn - last.in));
        this.recordsOut.inc(labels, Math.max(0, r.total.recordsOut - last.out));
        this.lastCounts.set(key, { in: Math.max(last.in, r.total.recordsIn), out: Math.max(last.out, r.total.recordsOut) });
      }
    }
    if (master.restartCount > this.restartsSeen) {
      this.restarts.inc(master.restartCount - this.restartsSeen);
      this.restartsSeen = master.restartCount;
    }
    const observed = new Set<number>();
    for (const s of master.checkpointCoordinator.history) {
      if (s.status === 'IN_PROGRESS') continue;
      observed.add(s.checkpointId);
      if (this.observed.has(s.checkpointId)) continue;
      this.checkpoints.inc({ status: s.status === 'COMPLETED' ? 'completed' : 'failed' });
      if (s.status !== 'COMPLETED') continue;
      this.duration.observe(s.durationMs / 1000);
      this.size.observe(s.persistedBytes);
      for (const t of s.subtasks) this.alignment.observe(t.metrics.alignmentMs / 1000);
    }
    this.observed = observed;
    this.updateTaskManagerBytes();
    this.changelog.update();
  }

  /** The counters follow each task manager's totals; a total that went down is a new process: a reset. */
  private updateTaskManagerBytes(): void {
    for (const t of this.job.master.taskManagers()) {
      const labels = tmLabels(t);
      const key = `${labels.taskmanager}/${labels.host}`;
      const last = this.lastTmBytes.get(key) ?? { sent: 0, received: 0 };
      const { bytesSent: sent, bytesReceived: received } = t.data;
      if (sent < last.sent || received < last.received) {
        this.tmBytesSent.remove(labels);
        this.tmBytesReceived.remove(labels);
        this.tmBytesSent.inc(labels, sent);
        this.tmBytesReceived.inc(labels, received);
      } else {
        this.tmBytesSent.inc(labels, sent - last.sent);
        this.tmBytesReceived.inc(labels, received - last.received);
      }
      this.lastTmBytes.set(key, { sent, received });
    }
  }

  /** Per task manager: state, heartbeat age, round trip and clock offset (absent until known). */
  private taskManagerGauges(registers: Registry[]): void {
    const exporter = this;
    const each = (set: (gauge: Gauge<TmLabel>, t: TaskManagerStatus) => void) =>
      function (this: Gauge<TmLabel>): void {
        this.reset();
        for (const t of exporter.job.master.taskManagers()) set(this, t);
      };
    new Gauge({
      name: 'weir_taskmanager_state',
      help: 'A task manager of the newest attempt: 1 for its current state (starting, running, stopping, dead, stopped).',
      labelNames: [...TM_LABELS, 'state'],
      registers,
      collect() {
        this.reset();
        for (const t of exporter.job.master.taskManagers()) for (const s of TM_STATES) this.set({ ...tmLabels(t), state: s }, s === t.state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'weir_taskmanager_heartbeat_age_seconds',
      help: "Seconds since a task manager's last heartbeat answer, on the job master's clock.",
      labelNames: TM_LABELS,
      registers,
      collect: each((g, t) => {
        if (t.lastHeartbeatAgeMs !== null) g.set(tmLabels(t), t.lastHeartbeatAgeMs / 1000);
      }),
    });
    new Gauge({
      name: 'weir_taskmanager_round_trip_seconds',
      help: "A task manager's newest heartbeat round trip.",
      labelNames: TM_LABELS,
      registers,
      collect: each((g, t) => {
        if (t.roundTripMs !== null) g.set(tmLabels(t), t.roundTripMs / 1000);
      }),
    });
    new Gauge({
      name: 'weir_taskmanager_clock_offset_seconds',
      help: "A task manager's wall clock minus the job master's, estimated from heartbeat round trips.",
      labelNames: TM_LABELS,
      registers,
      collect: each((g, t) => {
        if (t.clockOffset !== null) g.set(tmLabels(t), t.clockOffset.offsetMs / 1000);
      }),
    });
  }

  async scrape(): Promise<{ contentType: string; text: string }> {
    this.update();
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  private perVertexRate(direction: 'in' | 'out'): void {
    const gauge = (
      direction === 'in' ? this.registry.getSingleMetric('weir_records_in_per_second') : this.registry.getSingleMetric('weir_records_out_per_second')
    ) as Gauge<'vertex' | 'vertex_name'>;
    gauge.reset();
    const { master, sampler } = this.job;
    for (const v of master.config.graph.vertices) {
      let sum = 0;
      for (let i = 0; i < v.parallelism; i++) {
        const r = sampler.ratesOf(v.index, i);
        sum += direction === 'in' ? r.recordsInPerSec : r.recordsOutPerSec;
      }
      gauge.set({ vertex: vertexId(v.index), vertex_name: v.name }, sum);
    }
  }
}
