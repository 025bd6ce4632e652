/**
 * Periodic watermark rounds on a subtask's processing-time service: `tick` runs every
 * `intervalMs` (in the subtask's mailbox) until `stop`. Shared by the per-subtask watermark
 * emission and the per-split multiplexer.
 */
import type { Cancellable } from '../../core/time.ts';
import type { ProcessingTimeService } from './processing-time.ts';

export class PeriodicRounds {
  private next: Cancellable | null = null;
  private stoppedFlag = false;

  constructor(
    private readonly time: ProcessingTimeService,
    private readonly intervalMs: number,
    private readonly tick: () => void,
  ) {}

  /** Whether `stop` was called: nothing runs afterwards. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** Schedules the first round (one interval from now). */
  start(): void {
    if (!this.stoppedFlag) this.schedule();
  }

  private schedule(): void {
    this.next = this.time.scheduleAt(this.time.now() + this.intervalMs, () => {
      if (this.stoppedFlag) return;
      this.tick();
      this.schedule();
    });
  }

  /** Cancels the next round; idempotent. */
  stop(): void {
    this.stoppedFlag = true;
    this.next?.cancel();
    this.next = null;
  }
}
