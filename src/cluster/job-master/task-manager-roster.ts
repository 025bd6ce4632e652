/**
 * TaskManagerRoster: what the job master knows of the task managers of one pool, for the REST API,
 * the dashboard and `/metrics`: where each runs (its launcher's description), whether it lives,
 * when it last answered, its clock offset (clock-offsets.ts), what its data links carried and which
 * subtasks the newest attempt placed on it. A pool outlives attempts (kept warm across restarts),
 * so does its roster; the attempt running on the pool feeds it (remote-attempt.ts). Times of day
 * are the job master's `preciseWallNow`, ages its monotonic `Clock.now()`.
 */
import type { Clock } from '../../core/time.ts';
import { preciseWallNow } from '../../core/wall-time.ts';
import type { ExecutionPlan } from '../../graph/execution-plan.ts';
import { NO_DATA_TRAFFIC } from '../task-manager/data-traffic.ts';
import type { DataTrafficFigures, Placement } from '../transport/protocol.ts';
import { ClockOffsetEstimator, correctionMs, type ClockOffset } from './clock-offsets.ts';
import type { TaskManagerDescription } from './remote-deployment.ts';

/**
 * `starting`: launched, not heard from yet; `running`: answering; `stopping`: told to cancel its
 * subtasks, not answered yet; `dead`: found dead (its thread or process ended, or it went silent);
 * `stopped`: its pool was shut down (the job ended, or the next attempt runs on new task managers).
 */
export type TaskManagerState = 'starting' | 'running' | 'stopping' | 'dead' | 'stopped';

/** One task manager as the job master sees it now. */
export interface TaskManagerStatus {
  readonly index: number;
  readonly description: TaskManagerDescription;
  readonly state: TaskManagerState;
  /** Ms since its last heartbeat answer (or hello) on the job master's clock; null before the first. */
  readonly lastHeartbeatAgeMs: number | null;
  /** The newest heartbeat round trip, ms; null before the first. */
  readonly roundTripMs: number | null;
  /** Its clock against the job master's; null before the first round trip. */
  readonly clockOffset: ClockOffset | null;
  /** Its data links over its life, as it last reported them. */
  readonly data: DataTrafficFigures;
  /** The subtasks the newest attempt placed on it. */
  readonly subtasks: ReadonlyArray<{ readonly vertex: number; readonly subtask: number }>;
  /** Slots those subtasks take (slot sharing: subtask i of every vertex shares slot i). */
  readonly slotsUsed: number;
}

/** Heartbeats awaiting an answer that are remembered per task manager (lost ones must not pile up). */
const PENDING_KEPT = 16;

/** The job master's record of one task manager. */
class Watched {
  state: TaskManagerState = 'starting';
  lastHeardMs: number | null = null;
  readonly clock = new ClockOffsetEstimator();
  data: DataTrafficFigures = NO_DATA_TRAFFIC;
  /** Heartbeat seq -> the job master's wall-clock ms it was sent. */
  readonly pending = new Map<number, number>();
  subtasks: Array<{ vertex: number; subtask: number }> = [];

  constructor(readonly description: TaskManagerDescription) {}
}

export class TaskManagerRoster {
  private readonly watched: Watched[];

  constructor(
    descriptions: readonly TaskManagerDescription[],
    private readonly clock: Clock,
  ) {
    this.watched = descriptions.map((d) => new Watched(d));
  }

  get size(): number {
    return this.watched.length;
  }

  /** An attempt deployed on the pool: its subtasks as placed; its heartbeats are numbered afresh. */
  deployed(placement: Placement, plan: ExecutionPlan): void {
    for (const w of this.watched) {
      w.subtasks = [];
      w.pending.clear();
    }
    plan.subtasks.forEach((s, i) => {
      this.watched[placement.ofSubtask[i]!]?.subtasks.push({ vertex: s.vertex, subtask: s.subtask });
    });
  }

  heartbeatSent(index: number, seq: number): void {
    const w = this.watched[index];
    if (w === undefined) return;
    w.pending.set(seq, preciseWallNow(this.clock));
    if (w.pending.size > PENDING_KEPT) w.pending.delete(w.pending.keys().next().value!);
  }

  /** Its hello, or any heartbeat answer: it lives. */
  heard(index: number): void {
    const w = this.watched[index];
    if (w === undefined) return;
    w.lastHeardMs = this.clock.now();
    if (w.state === 'starting') w.state = 'running';
  }

  /** A heartbeat answer: `at` is the task manager's wall clock when it answered. */
  answered(index: number, seq: number, at: number): void {
    const w = this.watched[index];
    if (w === undefined) return;
    const receivedMs = preciseWallNow(this.clock);
    this.heard(index);
    const sentMs = w.pending.get(seq);
    if (sentMs === undefined) return; // sent by an earlier attempt, or forgotten
    w.pending.delete(seq);
    w.clock.add({ sentMs, receivedMs, answeredAtMs: at });
  }

  reported(index: number, data: DataTrafficFigures): void {
    const w = this.watched[index];
    if (w !== undefined) w.data = data;
  }

  /** Told to cancel its subtasks. */
  stopping(index: number): void {
    const w = this.watched[index];
    if (w !== undefined && (w.state === 'running' || w.state === 'starting')) w.state = 'stopping';
  }

  /** It answered the cancel: alive, its subtasks stopped. */
  canceled(index: number): void {
    const w = this.watched[index];
    if (w !== undefined && w.state === 'stopping') w.state = 'running';
  }

  died(index: number): void {
    const w = this.watched[index];
    if (w !== undefined && w.state !== 'stopped') w.state = 'dead';
  }

  /** The pool was shut down: every task manager not dead is stopped. */
  shutDown(): void {
    for (const w of this.watched) if (w.state !== 'dead') w.state = 'stopped';
  }

  /** What to subtract from task manager `index`'s wall-clock stamps to read them on the job master's clock. */
  correctionOf(index: number): number {
    return correctionMs(this.watched[index]?.clock.estimate ?? null);
  }

  statuses(): TaskManagerStatus[] {
    const now = this.clock.now();
    return this.watched.map((w, index) => ({
      index,
      description: w.description,
      state: w.state,
      lastHeartbeatAgeMs: w.lastHeardMs === null ? null : Math.max(0, now - w.lastHeardMs),
      roundTripMs: w.clock.lastRoundTripMs,
      clockOffset: w.clock.estimate,
      data: w.data,
      subtasks: [...w.subtasks],
      slotsUsed: new Set(w.subtasks.map((s) => s.subtask)).size,
    }));
  }
}
