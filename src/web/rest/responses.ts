/**
 * The REST API's answers (docs/rest.md), typed once: the routes build them and the dashboard reads
 * them, so a field renamed here breaks both type checks. The dashboard is bundled on its own and
 * imports this file by path (type only), so it imports nothing itself and names no engine type.
 */

/** `GET /jobs`. */
export interface JobsList {
  jobs: Array<{ id: string; status: string }>;
}

/** A vertex's record figures: totals over every attempt, the running attempt's, and rates. */
export interface VertexMetrics {
  'read-records': number;
  'write-records': number;
  'read-records-attempt': number;
  'write-records-attempt': number;
  'read-records-per-second': number;
  'write-records-per-second': number;
  'backpressured-ratio-max': number;
}

export interface JobVertex {
  id: string;
  name: string;
  parallelism: number;
  maxParallelism: number;
  /** As far as its least advanced subtask. */
  status: string;
  operators: Array<{ uid: string; name: string }>;
  /** How many subtasks are in each status. */
  tasks: Record<string, number>;
  metrics: VertexMetrics;
}

export interface PlanNode {
  id: string;
  operator: string;
  parallelism: number;
  inputs: Array<{ num: number; id: string; ship_strategy: string; input: number }>;
}

export interface JobException {
  timestamp: number;
  attempt: number;
  exception: string;
  restarted: boolean;
}

/** `GET /jobs/:id`. */
export interface JobDetails {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  /** -1 while the job runs or restarts. */
  'end-time': number;
  duration: number;
  now: number;
  attempt: number;
  restarts: number;
  'restored-from': number | null;
  /** The job master's leader epoch with high availability (`weir run --ha`), 0 without. */
  'leader-epoch': number;
  /** Over every attempt. */
  'records-in': number;
  'records-out': number;
  /** In the running attempt. */
  'records-in-attempt': number;
  'records-out-attempt': number;
  vertices: JobVertex[];
  plan: { jid: string; name: string; nodes: PlanNode[] };
  exceptions: JobException[];
}

/** A changelog backend's figures (one subtask's over every attempt, or a vertex's totals). */
export interface ChangelogFiguresAnswer {
  /** Bytes of changes in the buffer, not sealed into a batch yet (now). */
  'pending-bytes': number;
  /** Bytes of sealed batches being uploaded (now). */
  'in-flight-bytes': number;
  /** Over every attempt. */
  'uploaded-bytes': number;
  uploads: number;
  'upload-retries': number;
  'upload-failures': number;
  materializations: number;
  'materialization-failures': number;
  /** Milliseconds since the newest materialization finished (a vertex: its oldest subtask's); null: none yet. */
  'materialization-age-ms': number | null;
  /** State bytes of the newest materialization. */
  'materialized-bytes': number;
  /** Log segments let go after a materialization. */
  truncations: number;
  /** Restores that replayed the log. */
  'restores-by-replay': number;
}

export interface ChangelogVertex {
  id: string;
  name: string;
  totals: ChangelogFiguresAnswer;
  subtasks: Array<ChangelogFiguresAnswer & { subtask: number }>;
}

/** `GET /jobs/:id/changelog` (Weir): the vertices using the changelog state backend. */
export interface JobChangelog {
  now: number;
  vertices: ChangelogVertex[];
}

/** `GET /ha` on a job master's web port (src/web/health.ts): its part in high availability. */
export type HaStatus =
  | { role: 'single' | 'starting' }
  | { role: 'standby'; job: string; leader: string; 'leader-epoch': number; store: string }
  | {
      role: 'leader';
      job: string;
      'leader-epoch': number;
      store: string;
      /** The standbys the HA store lists (each renewed at its polls). */
      standbys: Array<{ holder: string; address: string | null; 'seen-ms-ago': number }>;
    };

/** `GET /jobs/:id/exceptions`. */
export interface JobExceptions {
  exceptions: JobException[];
}

export type CheckpointStatus = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** min, max, avg and percentiles of a list of figures (all 0 for none). */
export interface Stat {
  min: number;
  max: number;
  avg: number;
  p50: number;
  p90: number;
  p99: number;
}

/** A checkpoint of the history (and of `latest`); `GET /jobs/:id/checkpoints/details/:cid` adds `tasks`. */
export interface CheckpointEntry {
  className: 'checkpoint' | 'savepoint';
  id: number;
  status: CheckpointStatus;
  is_savepoint: boolean;
  is_final: boolean;
  checkpoint_type: 'CHECKPOINT' | 'UNALIGNED_CHECKPOINT' | 'SAVEPOINT';
  trigger_timestamp: number;
  latest_ack_timestamp: number | null;
  state_size: number;
  checkpointed_size: number;
  end_to_end_duration: number;
  processed_data: number;
  persisted_data: number;
  num_subtasks: number;
  num_acknowledged_subtasks: number;
  /** Deleted from storage by retention or the job's end (external_path is then null). */
  discarded: boolean;
  external_path: string | null;
  failure_message: string | null;
  failure_reason: string | null;
  traced: boolean;
}

/** The figures the summary of completed checkpoints covers. */
export type SummaryFigure = 'end_to_end_duration' | 'checkpointed_size' | 'state_size' | 'persisted_data' | 'processed_data' | 'alignment_duration';

/** `GET /jobs/:id/advice` (Weir): the checkpoint advisor's answer, its situation and recommendations. */
export type { Advice, Recommendation, Situation } from '../../advisor/rules.ts';

/** `GET /jobs/:id/checkpoints`. */
export interface CheckpointsOverview {
  counts: { restored: number; total: number; in_progress: number; completed: number; failed: number };
  summary: Record<SummaryFigure, Stat>;
  latest: {
    completed: CheckpointEntry | null;
    savepoint: CheckpointEntry | null;
    failed: CheckpointEntry | null;
    /** `restore_duration` (Weir): ms from the start of the recovering attempt's deployment to running, the restore included. */
    restored: { id: number; restore_timestamp: number; restore_duration: number } | null;
  };
  /** Newest first. */
  history: CheckpointEntry[];
}

/** One vertex's part of a checkpoint. */
export interface VertexCheckpoint {
  id: string;
  name: string;
  status: CheckpointStatus;
  latest_ack_timestamp: number | null;
  end_to_end_duration: number | null;
  state_size: number;
  checkpointed_size: number;
  processed_data: number;
  persisted_data: number;
  num_subtasks: number;
  num_acknowledged_subtasks: number;
}

/** `GET /jobs/:id/checkpoints/details/:cid`. */
export interface CheckpointDetails extends CheckpointEntry {
  tasks: Record<string, VertexCheckpoint>;
}

export interface SubtaskRef {
  vertex: string;
  subtask: number;
}

export interface BarrierArrival {
  channel: number;
  from: SubtaskRef | null;
  /** null: the barrier has not arrived on this channel. */
  timestamp: number | null;
  queued_ahead: number | null;
}

export type SubtaskCheckpoint =
  | { index: number; status: 'pending_or_failed' }
  | {
      index: number;
      status: 'completed';
      ack_timestamp: number | null;
      end_to_end_duration: number | null;
      state_size: number;
      checkpointed_size: number;
      checkpoint: { sync: number; async: number };
      alignment: { processed: number; persisted: number; duration: number };
      start_delay: number;
      unaligned_checkpoint: boolean;
      sync_start_timestamp: number;
      barrier_arrivals: BarrierArrival[];
    };

/** `GET /jobs/:id/checkpoints/details/:cid/subtasks/:vid`. */
export interface SubtaskCheckpointDetails extends VertexCheckpoint {
  checkpoint_id: number;
  subtasks: SubtaskCheckpoint[];
}

/** `GET /jobs/:id/checkpoints/config`: bare numbers in Flink's shape, -1 for off. */
export interface CheckpointConfig {
  mode: 'exactly_once' | 'at_least_once';
  interval: number;
  timeout: number;
  min_pause: number;
  max_concurrent: number;
  externalization: { enabled: boolean; delete_on_cancellation: boolean };
  tolerable_failed_checkpoints: number;
  retained: number;
  unaligned_checkpoints: boolean;
  aligned_checkpoint_timeout: number;
}

export type BackpressureLevel = 'ok' | 'low' | 'high';

export interface SubtaskBackpressure {
  subtask: number;
  backPressuredRatio: number;
  backpressureLevel: BackpressureLevel;
}

export interface VertexBackpressureEntry {
  id: string;
  name: string;
  backpressureLevel: BackpressureLevel;
  maxBackPressuredRatio: number;
  subtasks: SubtaskBackpressure[];
}

/** `GET /jobs/:id/backpressure`; status 'deprecated' before the first sample. */
export interface Backpressure {
  status: 'ok' | 'deprecated';
  'end-timestamp': number;
  vertices: VertexBackpressureEntry[];
}

/** `GET /jobs/:id/vertices/:vid/backpressure`. */
export interface VertexBackpressure {
  status: Backpressure['status'];
  backpressureLevel: BackpressureLevel;
  'end-timestamp': number;
  subtasks: SubtaskBackpressure[];
}

export type FlowEventType =
  | 'trigger'
  | 'inject'
  | 'barrier'
  | 'blocked'
  | 'alignment'
  | 'switch-to-unaligned'
  | 'sync'
  | 'async'
  | 'ack'
  | 'complete'
  | 'failed'
  | 'notify';

/** One step of a checkpoint's course; which fields it carries depends on its type (docs/rest.md). */
export interface FlowEvent {
  /** Milliseconds since the trigger (to 0.1 ms). */
  t: number;
  type: FlowEventType;
  /** The subtask it happened at. */
  vertex?: string;
  subtask?: number;
  channel?: string;
  from?: SubtaskRef;
  to?: SubtaskRef;
  sent?: number;
  until?: number;
  overtook?: boolean;
  ahead?: number;
  duration?: number;
  records?: number;
  unaligned?: boolean;
  bytes?: number;
  inflight_bytes?: number;
  location?: string | null;
  discarded?: boolean;
  reason?: string | null;
  message?: string | null;
}

/** `GET /jobs/:id/checkpoints/details/:cid/flow` (Weir's own route). */
export interface Flow {
  checkpoint_id: number;
  status: CheckpointStatus;
  kind: 'checkpoint' | 'savepoint';
  is_final: boolean;
  alignment: 'aligned' | 'unaligned' | 'at-least-once';
  aligned_timeout: number | null;
  /** Whole wall-clock milliseconds. */
  trigger_timestamp: number;
  traced: boolean;
  vertices: Array<{ id: string; name: string; parallelism: number; is_source: boolean; inputs: string[] }>;
  channels: Array<{ id: string; from: SubtaskRef; to: SubtaskRef }>;
  events: FlowEvent[];
}

/** One task manager of `GET /jobs/:id/taskmanagers`. */
export interface TaskManagerEntry {
  /** Its index in the pool, as a string. */
  id: string;
  host: string;
  /** Its operating-system process (a worker thread's is the job master's); null in memory. */
  pid: number | null;
  transport: 'in-memory' | 'worker-thread' | 'tcp';
  /** `host:port` of its data plane; null without an address (worker threads, in memory). */
  dataAddress: string | null;
  /** Slots it offers; null: as many as the placement gives it. */
  slotsNumber: number | null;
  /** Slots the subtasks placed on it take. */
  slotsUsed: number;
  state: 'starting' | 'running' | 'stopping' | 'dead' | 'stopped';
  /** Ms since its last heartbeat answer on the job master's clock; null before the first. */
  heartbeatAge: number | null;
  /** The newest heartbeat round trip, ms; null before the first. */
  roundTrip: number | null;
  /** Its wall clock minus the job master's, ms, and the uncertainty (half the round trip measured); null before a round trip. */
  clockOffset: { offset: number; uncertainty: number } | null;
  /** Payload bytes of the frames of its data links over its life (not reset per attempt). */
  dataBytesSent: number;
  dataBytesReceived: number;
  /** Frames and credit messages of its data links over its life. */
  dataMessagesSent: number;
  dataMessagesReceived: number;
  /** The subtasks the newest attempt placed on it. */
  subtasks: SubtaskRef[];
}

/** `GET /jobs/:id/taskmanagers` (Weir's own route): empty when every subtask runs in the job master's thread. */
export interface TaskManagers {
  taskmanagers: TaskManagerEntry[];
}

/** The `update` event of `GET /events`: the job, its checkpoints (the newest 30), backpressure and task managers. */
export interface LiveUpdate {
  job: JobDetails;
  checkpoints: CheckpointsOverview;
  backpressure: Backpressure;
  taskmanagers: TaskManagers;
}

/** `POST /jobs/:id/savepoints` and `POST /jobs/:id/stop`. */
export interface SavepointTriggered {
  'request-id': string;
}

/** `GET /jobs/:id/savepoints/:requestId`. */
export type SavepointStatus =
  | { status: { id: 'IN_PROGRESS' } }
  | { status: { id: 'COMPLETED' }; operation: { location: string } }
  | { status: { id: 'COMPLETED' }; operation: { 'failure-cause': { class: string; 'stack-trace': string } } };
