/**
 * HeartbeatMonitor: the job master's watch over its task managers. Every `intervalMs` of the
 * scheduler's clock it sends each live task manager a heartbeat; one whose last answer is older
 * than `timeoutMs` is declared dead, once; time this thread itself stood still is not counted. Time comes from the Clock/Scheduler seam, so in-memory
 * task managers under a seeded scheduler see the same heartbeats in every run.
 */
import type { Cancellable, Environment } from '../core/time.ts';

export interface HeartbeatSettings {
  /** Milliseconds between heartbeats. */
  readonly intervalMs: number;
  /** Milliseconds without an answer after which a task manager is dead. */
  readonly timeoutMs: number;
}

/** Which targets have been silent for longer than `timeoutMs` at `nowMs` (a pure decision). */
export function silentTargets(lastHeardMs: readonly number[], nowMs: number, timeoutMs: number): number[] {
  const out: number[] = [];
  lastHeardMs.forEach((last, index) => {
    if (nowMs - last > timeoutMs) out.push(index);
  });
  return out;
}

export class HeartbeatMonitor {
  private readonly lastHeardMs: number[];
  private readonly dead = new Set<number>();
  private timer: Cancellable | null = null;
  private seq = 0;
  private lastTickMs = 0;

  constructor(
    targets: number,
    private readonly settings: HeartbeatSettings,
    private readonly env: Environment,
    private readonly send: (index: number, seq: number) => void,
    private readonly onDead: (index: number, silentMs: number) => void,
  ) {
    this.lastHeardMs = Array.from({ length: targets }, () => 0);
  }

  /** Counts every target as heard now and starts the ticks; idempotent. */
  start(): void {
    if (this.timer !== null) return;
    this.lastTickMs = this.env.clock.now();
    this.lastHeardMs.fill(this.lastTickMs);
    this.schedule();
  }

  /** A heartbeat answer from `index` arrived. */
  heard(index: number): void {
    if (index < this.lastHeardMs.length) this.lastHeardMs[index] = this.env.clock.now();
  }

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
    if (stalledMs > 0) for (let i = 0; i < this.lastHeardMs.length; i++) this.lastHeardMs[i]! += stalledMs;
    for (const index of silentTargets(this.lastHeardMs, now, this.settings.timeoutMs)) {
      if (this.dead.has(index)) continue;
      this.dead.add(index);
      this.onDead(index, now - this.lastHeardMs[index]!);
      if (this.timer === null) return; // the handler stopped the monitor
    }
    const seq = ++this.seq;
    this.lastHeardMs.forEach((_, index) => {
      if (!this.dead.has(index)) this.send(index, seq);
    });
  }
}
