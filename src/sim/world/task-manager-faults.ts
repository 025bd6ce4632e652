/**
 * The seed's faults of in-memory task managers: data links into a task manager stall (so frames
 * and credits an attempt sent arrive after it was cancelled, on a task manager the next attempt
 * reuses), a task manager gets stuck in user code on cancel (so the cancellation watchdog
 * ends it, on the virtual clock), and a task manager dies alone (its subtasks stop, its links go
 * dead; the job master finds it by missed heartbeats). Drawn from streams of their own, so the
 * other faults of a seed stay as they were. It also collects what the task managers saw go wrong.
 */
import type { InMemoryPoolFaults, InMemoryTaskManagerFaults } from '../../cluster/launchers/in-memory-task-managers.ts';
import { SeededRandom } from '../../core/time.ts';

/** Probabilities and sizes of the task manager faults of a seed (all 0: none). */
export interface TaskManagerFaultKnobs {
  /** Per data message arriving at a task manager: its data links stall. */
  readonly stallProbability: number;
  /** Per cancel of a task manager: its incoming data links stall (messages in flight arrive late). */
  readonly cancelStallProbability: number;
  readonly stallMsMax: number;
  /** Per cancel of a task manager: a user function is stuck, the task manager never answers. */
  readonly stuckOnCancelProbability: number;
  /** Virtual ms after faults start at which one task manager of the running attempt dies alone. */
  readonly deathsAtMs: readonly number[];
}

export const NO_TASK_MANAGER_FAULTS: TaskManagerFaultKnobs = {
  stallProbability: 0,
  cancelStallProbability: 0,
  stallMsMax: 0,
  stuckOnCancelProbability: 0,
  deathsAtMs: [],
};

/**
 * Heartbeats of seeds where task managers die alone: the defaults (a beat a second, dead after
 * ten) would leave the job stalled for ten virtual seconds per death; these find a dead task
 * manager within a few checkpoint intervals and stay far above what an answer takes on the
 * simulator's scheduler.
 */
export const DEATH_HEARTBEAT = { intervalMs: 20, timeoutMs: 200 } as const;

/** Task managers stuck per seed at most: each costs the cancellation timeout. */
const MAX_STUCK = 3;

export class SimTaskManagerFaults implements InMemoryTaskManagerFaults {
  active = false;
  stuck = 0;
  staleMessages = 0;
  /** Control messages of another epoch than their task manager's current one (dropped there). */
  staleControlMessages = 0;
  /** Task managers that died alone. */
  deaths = 0;
  readonly violations: string[] = [];
  private readonly random: SeededRandom;
  /** Which task manager dies: a stream of its own, so the other draws stay as they were. */
  private readonly deathRandom: SeededRandom;
  /** The newest pool launched (the running attempt's, or the one kept for the next). */
  private pool: InMemoryPoolFaults | null = null;

  constructor(
    seed: number,
    private readonly knobs: TaskManagerFaultKnobs,
  ) {
    this.random = new SeededRandom(seed ^ 0x51a11ed5);
    this.deathRandom = new SeededRandom(seed ^ 0x0dead7a5);
  }

  launched(pool: InMemoryPoolFaults): void {
    this.pool = pool;
  }

  /** One task manager of the newest live pool dies alone; the index it was, or null when no pool runs. */
  killOne(): number | null {
    const pool = this.pool;
    if (pool === null || pool.down) return null;
    const index = this.deathRandom.int(pool.count);
    if (!pool.kill(index)) return null;
    this.deaths++;
    return index;
  }

  /** Whether a task manager's death explains `err`: one died alone and the job master found it silent. */
  explains(err: unknown): boolean {
    if (this.deaths === 0) return false;
    for (let e: unknown = err, i = 0; i < 10 && e instanceof Error; i++, e = e.cause) if (e.message.includes('no heartbeat answered')) return true;
    return false;
  }

  dataStallMs(_to: number, cause: 'message' | 'cancel'): number {
    const p = cause === 'cancel' ? this.knobs.cancelStallProbability : this.knobs.stallProbability;
    if (!this.active || p === 0 || this.random.next() >= p) return 0;
    return 1 + this.random.next() * this.knobs.stallMsMax;
  }

  stuckOnCancel(_index: number): boolean {
    const p = this.knobs.stuckOnCancelProbability;
    if (!this.active || p === 0 || this.stuck >= MAX_STUCK || this.random.next() >= p) return false;
    this.stuck++;
    return true;
  }

  violation(message: string): void {
    if (this.violations.length < 20) this.violations.push(message);
  }

  staleData(_index: number): void {
    this.staleMessages++;
  }

  staleControl(_index: number): void {
    this.staleControlMessages++;
  }
}

/**
 * Half the seeds stall data links, a third get task managers stuck on cancel; from the seed's own
 * stream. A quarter of the seeds with in-memory task managers lose one (an eighth: two) alone, at a moment
 * within the sources' duration; from another stream, so the draws before it stayed as they were.
 */
export function drawTaskManagerFaults(seed: number, durationMs: number, taskManagers: number): TaskManagerFaultKnobs {
  const r = new SeededRandom(seed ^ 0x3c4a11ed);
  const stalls = r.next() < 0.5;
  const stuck = r.next() < 0.35;
  const d = new SeededRandom(seed ^ 0x7d1e5a1f);
  const roll = d.next();
  const deaths = taskManagers < 2 ? 0 : roll < 0.125 ? 2 : roll < 0.25 ? 1 : 0;
  return {
    stallProbability: stalls ? 0.01 : 0,
    cancelStallProbability: stalls ? 0.6 : 0,
    stallMsMax: 10 + r.int(40),
    stuckOnCancelProbability: stuck ? 0.3 : 0,
    deathsAtMs: Array.from({ length: deaths }, () => d.next() * durationMs),
  };
}
