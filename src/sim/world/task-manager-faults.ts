/**
 * The seed's faults of in-memory task managers: data links into a task manager stall (so frames
 * and credits an attempt sent arrive after it was cancelled, on a task manager the next attempt
 * reuses), and a task manager gets stuck in user code on cancel (so the cancellation watchdog
 * ends it, on the virtual clock). Drawn from a stream of its own, so the other faults of a seed
 * stay as they were. It also collects what the task managers saw go wrong.
 */
import type { InMemoryTaskManagerFaults } from '../../cluster/launchers/in-memory-task-managers.ts';
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
}

export const NO_TASK_MANAGER_FAULTS: TaskManagerFaultKnobs = { stallProbability: 0, cancelStallProbability: 0, stallMsMax: 0, stuckOnCancelProbability: 0 };

/** Task managers stuck per seed at most: each costs the cancellation timeout. */
const MAX_STUCK = 3;

export class SimTaskManagerFaults implements InMemoryTaskManagerFaults {
  active = false;
  stuck = 0;
  staleMessages = 0;
  /** Control messages of another epoch than their task manager's current one (dropped there). */
  staleControlMessages = 0;
  readonly violations: string[] = [];
  private readonly random: SeededRandom;

  constructor(
    seed: number,
    private readonly knobs: TaskManagerFaultKnobs,
  ) {
    this.random = new SeededRandom(seed ^ 0x51a11ed5);
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

/** Half the seeds stall data links, a third get task managers stuck on cancel; from the seed's own stream. */
export function drawTaskManagerFaults(seed: number): TaskManagerFaultKnobs {
  const r = new SeededRandom(seed ^ 0x3c4a11ed);
  const stalls = r.next() < 0.5;
  const stuck = r.next() < 0.35;
  return {
    stallProbability: stalls ? 0.01 : 0,
    cancelStallProbability: stalls ? 0.6 : 0,
    stallMsMax: 10 + r.int(40),
    stuckOnCancelProbability: stuck ? 0.3 : 0,
  };
}
