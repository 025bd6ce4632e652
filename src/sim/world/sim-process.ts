/**
 * One simulated operating-system process inside the world: every event it schedules runs only while
 * it is alive, so killing it drops its timers, mails, messages and storage completions at once, as
 * the death of a real process does. What it wrote to storage or to a sink's external side stays.
 */
import type { Cancellable, Environment, Scheduler } from '../../core/time.ts';
import type { SimWorld } from './sim-world.ts';

export class SimProcess implements Scheduler {
  private alive = true;

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

  execute(fn: () => void): void {
    this.world.execute(() => this.alive && fn());
  }

  schedule(delayMs: number, fn: () => void): Cancellable {
    return this.world.schedule(delayMs, () => this.alive && fn());
  }

  /** From now on nothing this process scheduled runs. */
  kill(): void {
    this.alive = false;
  }
}
