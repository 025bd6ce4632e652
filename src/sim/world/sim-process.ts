/**
 * One simulated operating-system process inside the world: every event it schedules runs only while
 * it is alive, so killing it drops its timers, mails, messages and storage completions at once, as
 * the death of a real process does. What it wrote to storage or to a sink's external side stays.
 * Paused (SIGSTOP), what comes due waits and runs when it is resumed.
 */
import type { Cancellable, Environment, Scheduler } from '../../core/time.ts';
import type { SimWorld } from './sim-world.ts';

export class SimProcess implements Scheduler {
  private alive = true;
  /** While paused (SIGSTOP), what came due waits here, in the order it came due. */
  private held: Array<() => void> | null = null;

  constructor(
    private readonly world: SimWorld,
    readonly pid: number,
  ) {}

  get environment(): Environment {
    return { clock: this.world, scheduler: this, random: this.world.random };
  }

  get isAlive(): boolean {
    return this.alive;
  }

  get isPaused(): boolean {
    return this.held !== null;
  }

  execute(fn: () => void): void {
    this.world.execute(() => this.run(fn));
  }

  schedule(delayMs: number, fn: () => void): Cancellable {
    return this.world.schedule(delayMs, () => this.run(fn));
  }

  /** From now on nothing this process scheduled runs. */
  kill(): void {
    this.alive = false;
    this.held = null;
  }

  /** SIGSTOP: nothing of this process runs (its timers, messages, storage completions wait) until `resume`. */
  pause(): void {
    if (this.alive && this.held === null) this.held = [];
  }

  /** SIGCONT: what came due while paused runs now, in the order it came due (a promise chain it starts goes on from there). */
  resume(): void {
    const held = this.held;
    this.held = null;
    for (const fn of held ?? []) this.world.execute(() => this.run(fn));
  }

  private run(fn: () => void): void {
    if (!this.alive) return;
    if (this.held !== null) this.held.push(fn);
    else fn();
  }
}
