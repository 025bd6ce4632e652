/**
 * The seed's faults of in-memory task managers: data links into a task manager stall (so frames
 * and credits an attempt sent arrive after it was cancelled, on a task manager the next attempt
 * reuses), a task manager gets stuck in user code on cancel (so the cancellation watchdog
 * ends it, on the virtual clock), a task manager dies silently (its subtasks stop, its links go
 * dead; the job master finds it by missed heartbeats), and the faults of TCP connections and
 * processes: a control or data connection drops (both ends learn it), a task manager is cut off
 * by a partition that heals, a task manager's process exits (the job master and its peers learn
 * it at once). Drawn from streams of their own, so the other faults of a seed stay as they were.
 * It also collects what the task managers saw go wrong.
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
  /** Virtual ms after faults start at which one task manager of the running attempt dies silently (found by missed heartbeats). */
  readonly deathsAtMs: readonly number[];
  /** Faults of connections and processes, each at virtual ms after faults start, striking a task manager of the newest pool. */
  readonly links: readonly LinkFault[];
}

/**
 * A fault of the TCP model: a task manager's control connection drops, a data connection between
 * two drops, a task manager is cut off for `healAfterMs`, or its process exits.
 */
export type LinkFault =
  | { readonly kind: 'control-drop' | 'data-drop' | 'exit'; readonly atMs: number }
  | { readonly kind: 'partition'; readonly atMs: number; readonly healAfterMs: number };

export const NO_TASK_MANAGER_FAULTS: TaskManagerFaultKnobs = {
  stallProbability: 0,
  cancelStallProbability: 0,
  stallMsMax: 0,
  stuckOnCancelProbability: 0,
  deathsAtMs: [],
  links: [],
};

/**
 * Heartbeats of seeds where task managers die alone: the defaults (a beat a second, dead after
 * ten) would leave the job stalled for ten virtual seconds per death; these find a dead task
 * manager within a few checkpoint intervals and stay far above what an answer takes on the
 * simulator's scheduler.
 */
export const DEATH_HEARTBEAT = { intervalMs: 20, timeoutMs: 200, startTimeoutMs: 400 } as const;

/** Task managers stuck per seed at most: each costs the cancellation timeout. */
const MAX_STUCK = 3;

export class SimTaskManagerFaults implements InMemoryTaskManagerFaults {
  active = false;
  stuck = 0;
  staleMessages = 0;
  /** Control messages of another epoch than their task manager's current one (dropped there). */
  staleControlMessages = 0;
  /** Task managers that died silently. */
  deaths = 0;
  /** Control connections that dropped, data connections that dropped, processes that exited. */
  controlDrops = 0;
  dataDrops = 0;
  exits = 0;
  /** Partitions begun, healed, and partitioned task managers that learned at the heal that their job master had closed their connection. */
  partitions = 0;
  partitionsHealed = 0;
  partitionsOutlived = 0;
  readonly violations: string[] = [];
  private readonly random: SeededRandom;
  /** Which task manager dies: a stream of its own, so the other draws stay as they were. */
  private readonly deathRandom: SeededRandom;
  /** Which task managers a connection or process fault strikes: another stream of its own. */
  private readonly linkRandom: SeededRandom;
  /** The newest pool launched (the running attempt's, or the one kept for the next). */
  private pool: InMemoryPoolFaults | null = null;

  constructor(
    seed: number,
    private readonly knobs: TaskManagerFaultKnobs,
  ) {
    this.random = new SeededRandom(seed ^ 0x51a11ed5);
    this.deathRandom = new SeededRandom(seed ^ 0x0dead7a5);
    this.linkRandom = new SeededRandom(seed ^ 0x7c9d11c5);
  }

  launched(pool: InMemoryPoolFaults): void {
    this.pool = pool;
  }

  /** One task manager of the newest live pool dies silently; the index it was, or null when no pool runs. */
  killOne(): number | null {
    const pool = this.pool;
    if (pool === null || pool.down) return null;
    const index = this.deathRandom.int(pool.count);
    if (!pool.hang(index)) return null;
    this.deaths++;
    return index;
  }

  /** Strikes a task manager (two for a data connection) of the newest live pool; what happened, or null when nothing could be struck. */
  strike(fault: LinkFault): string | null {
    const pool = this.pool;
    if (pool === null || pool.down) return null;
    const index = this.linkRandom.int(pool.count);
    switch (fault.kind) {
      case 'control-drop':
        if (!pool.dropControl(index)) return null;
        this.controlDrops++;
        return `the control connection of task manager ${index} dropped`;
      case 'data-drop': {
        const other = (index + 1 + this.linkRandom.int(pool.count - 1)) % pool.count;
        if (!pool.dropData(index, other)) return null;
        this.dataDrops++;
        return `the data connection between task managers ${index} and ${other} dropped`;
      }
      case 'exit':
        if (!pool.kill(index)) return null;
        this.exits++;
        return `the process of task manager ${index} exited`;
      case 'partition':
        if (!pool.partition(index, fault.healAfterMs)) return null;
        this.partitions++;
        return `task manager ${index} is cut off for ${fault.healAfterMs.toFixed(1)}ms`;
    }
  }

  healed(_index: number): void {
    this.partitionsHealed++;
  }

  lostJobMaster(_index: number, closedByJobMaster: boolean): void {
    if (closedByJobMaster) this.partitionsOutlived++;
  }

  /**
   * Whether the faults struck so far explain `err`: a silent death or a partition the job master
   * found by missed heartbeats, a control connection closed (dropped, or its process exited), a
   * data connection lost (dropped, or the peer's process exited).
   */
  explains(err: unknown): boolean {
    const found = (text: string) => {
      for (let e: unknown = err, i = 0; i < 10 && e instanceof Error; i++, e = e.cause) if (e.message.includes(text)) return true;
      return false;
    };
    return (
      (this.deaths + this.partitions > 0 && (found('no heartbeat answered') || found('no hello within'))) ||
      (this.controlDrops + this.exits > 0 && found('control connection closed')) ||
      (this.dataDrops + this.exits > 0 && found('data connection to task manager'))
    );
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
 * Partitions heal after this long: half of them before the job master's heartbeats (DEATH_HEARTBEAT)
 * could declare the task manager dead, half well after, so it stops when it heals.
 */
const SHORT_PARTITION_MS = [5, 150] as const;
const LONG_PARTITION_MS = [260, 700] as const;

/**
 * Half the seeds with in-memory task managers get one to four faults of connections and processes,
 * each of the four kinds alike, at a moment within the sources' duration. From a stream of their
 * own: the seed's other draws stay as they were.
 */
function drawLinkFaults(seed: number, durationMs: number, taskManagers: number): LinkFault[] {
  const r = new SeededRandom(seed ^ 0x2b1f0c77);
  if (taskManagers < 2 || r.next() >= 0.5) return [];
  return Array.from({ length: 1 + r.int(4) }, (): LinkFault => {
    const atMs = r.next() * durationMs;
    const kind = (['control-drop', 'data-drop', 'exit', 'partition'] as const)[r.int(4)]!;
    if (kind !== 'partition') return { kind, atMs };
    const [low, high] = r.next() < 0.5 ? SHORT_PARTITION_MS : LONG_PARTITION_MS;
    return { kind, atMs, healAfterMs: low + r.next() * (high - low) };
  });
}

/**
 * Half the seeds stall data links, a third get task managers stuck on cancel; from the seed's own
 * stream. A quarter of the seeds with in-memory task managers lose one (an eighth: two) silently, at a moment
 * within the sources' duration; from another stream, so the draws before it stayed as they were;
 * and half of them get faults of connections and processes (drawLinkFaults), from a third stream.
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
    links: drawLinkFaults(seed, durationMs, taskManagers),
  };
}
