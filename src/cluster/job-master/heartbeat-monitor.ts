/**
 * HeartbeatMonitor: the job master's watch over its task managers. Every `intervalMs` of the
 * scheduler's clock it sends each live task manager a heartbeat; one whose last answer is older
 * than `timeoutMs` is declared dead, once; time this thread itself stood still is not counted.
 * A task manager is held to `timeoutMs` from its first answer on (each says hello as soon as its
 * thread or process runs, before it loads the job module or restores anything): starting a thread
 * is not answering late. Until then it has `startTimeoutMs` from `start()`: one that dies before its
 * hello (silently, so no error or exit event tells) is still declared dead, once. Time
 * comes from the Clock/Scheduler seam, so in-memory task managers under a seeded scheduler see the
 * same heartbeats in every run.
 */
import type { Cancellable, Environment } from '../../core/time.ts';

export interface HeartbeatSettings {
  /** Milliseconds between heartbeats. */
  readonly intervalMs: number;
  /** Milliseconds without an answer after which a task manager is dead. */
  readonly timeoutMs: number;
  /** Milliseconds from the deploy within which a task manager not heard from yet must say hello. */
  readonly startTimeoutMs: number;
}

/**
 * Which targets have been silent for too long at `nowMs` (a pure decision): one heard from at
 * `last` for longer than `timeoutMs`, one not heard from yet (`null`) for longer than
 * `startTimeoutMs` since `startedMs`.
 */
export function silentTargets(
  lastHeardMs: ReadonlyArray<number | null>,
  nowMs: number,
  settings: Pick<HeartbeatSettings, 'timeoutMs' | 'startTimeoutMs'>,
  startedMs: number,
): number[] {
  const out: number[] = [];
  lastHeardMs.forEach((last, index) => {
    if (last === null ? nowMs - startedMs > settings.startTimeoutMs : nowMs - last > settings.timeoutMs) out.push(index);
  });
  return out;
}

export class HeartbeatMonitor {
  /** null: not heard from yet. */
  private readonly lastHeardMs: Array<number | null>;
  private readonly dead = new Set<number>();
  private timer: Cancellable | null = null;
  private seq = 0;
  private lastTickMs = 0;
  /** When the watch began (moved on by time this thread stood still), for targets not heard from yet. */
  private startedMs = 0;

  constructor(
    targets: number,
    private readonly settings: HeartbeatSettings,
    private readonly env: Environment,
    private readonly send: (index: number, seq: number) => void,
    /** `everHeard` false: it never said hello within startTimeoutMs. */
    private readonly onDead: (index: number, silentMs: number, everHeard: boolean) => void,
  ) {
    this.lastHeardMs = Array.from({ length: targets }, () => null);
  }

  /** Starts the ticks; idempotent. Answers heard before count from now. */
  start(): void {
    if (this.timer !== null) return;
    this.lastTickMs = this.startedMs = this.env.clock.now();
    for (let i = 0; i < this.lastHeardMs.length; i++) if (this.lastHeardMs[i] !== null) this.lastHeardMs[i] = this.lastTickMs;
    this.schedule();
  }

  /** A heartbeat answer (or the hello) from `index` arrived: from now on it is watched. */
  heard(index: number): void {
    if (index < this.lastHeardMs.length) this.lastHeardMs[index] = this.env.clock.now();
  }

  /** Ends the ticks; idempotent. */
  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private schedule(): void {
    this.timer = this.env.scheduler.schedule(this.settings.intervalMs, () => {
      if (this.timer === null) return;
      this.tick();
      if (this.timer !== null) this.schedule();
    });
  }

  private tick(): void {
    const now = this.env.clock.now();
    // A tick that comes late means this thread did not run (a long step, a loaded machine): answers
    // could not be read meanwhile, so that time counts as silence of nobody.
    const stalledMs = now - this.lastTickMs - this.settings.intervalMs;
    this.lastTickMs = now;
    if (stalledMs > 0) {
      this.startedMs += stalledMs;
      for (let i = 0; i < this.lastHeardMs.length; i++) {
        const last = this.lastHeardMs[i];
        if (last !== null && last !== undefined) this.lastHeardMs[i] = last + stalledMs;
      }
    }
    for (const index of silentTargets(this.lastHeardMs, now, this.settings, this.startedMs)) {
      if (this.dead.has(index)) continue;
      this.dead.add(index);
      const last = this.lastHeardMs[index] ?? null;
      this.onDead(index, now - (last ?? this.startedMs), last !== null);
      if (this.timer === null) return; // the handler stopped the monitor
    }
    const seq = ++this.seq;
    this.lastHeardMs.forEach((_, index) => {
      if (!this.dead.has(index)) this.send(index, seq);
    });
  }
}
