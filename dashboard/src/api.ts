/** The REST API's answers as the dashboard reads them (see docs/rest.md), and fetching them. */

export interface Vertex {
  id: string;
  name: string;
  parallelism: number;
  status: string;
  operators: Array<{ uid: string; name: string }>;
  metrics: Record<string, number>;
}

export interface Job {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  /** -1 while the job runs or restarts. */
  'end-time': number;
  duration: number;
  attempt: number;
  restarts: number;
  'restored-from': number | null;
  /** Over every attempt. */
  'records-in': number;
  'records-out': number;
  /** In the running attempt. */
  'records-in-attempt': number;
  'records-out-attempt': number;
  vertices: Vertex[];
  plan: { nodes: Array<{ id: string; inputs: Array<{ id: string; ship_strategy: string }> }> };
  exceptions: Array<{ timestamp: number; attempt: number; exception: string; restarted: boolean }>;
}

export interface Stat {
  min: number;
  max: number;
  avg: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface CheckpointEntry {
  id: number;
  status: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  is_savepoint: boolean;
  is_final: boolean;
  checkpoint_type: string;
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
  traced: boolean;
}

export interface Checkpoints {
  counts: Record<string, number>;
  summary: Record<string, Stat>;
  latest: {
    completed: CheckpointEntry | null;
    savepoint: CheckpointEntry | null;
    failed: CheckpointEntry | null;
    restored: { id: number; restore_timestamp: number } | null;
  };
  history: CheckpointEntry[];
}

export interface Backpressure {
  vertices: Array<{
    id: string;
    name: string;
    backpressureLevel: string;
    maxBackPressuredRatio: number;
    subtasks: Array<{ subtask: number; backPressuredRatio: number; backpressureLevel: string }>;
  }>;
}

export interface Update {
  job: Job;
  checkpoints: Checkpoints;
  backpressure: Backpressure;
}

export interface SubtaskRef {
  vertex: string;
  subtask: number;
}

export interface FlowEvent {
  t: number;
  type: string;
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
  bytes?: number;
  inflight_bytes?: number;
  records?: number;
  reason?: string;
}

export interface Flow {
  checkpoint_id: number;
  status: string;
  kind: string;
  alignment: string;
  aligned_timeout: number | null;
  trigger_timestamp: number;
  traced: boolean;
  vertices: Array<{ id: string; name: string; parallelism: number; is_source: boolean; inputs: string[] }>;
  channels: Array<{ id: string; from: SubtaskRef; to: SubtaskRef }>;
  events: FlowEvent[];
}

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json()) as T & { errors?: string[] };
  if (!res.ok) throw new Error(body.errors?.[0] ?? `${path}: HTTP ${res.status}`);
  return body;
}
