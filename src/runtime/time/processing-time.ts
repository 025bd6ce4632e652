/**
 * Processing time for operators: the job's clock, and callbacks that run as mails of the subtask's
 * mailbox (never inside another step), scheduled through the Scheduler seam so the simulator's
 * virtual clock drives them.
 */
import type { Cancellable, Clock, Scheduler } from '../../core/time.ts';

/** What an operator uses for processing time (periodic watermarks, processing-time timers). */
export interface ProcessingTimeService {
  /** The job's clock in milliseconds (virtual under the simulator). */
  now(): number;
  /** Runs `fn` in the subtask's mailbox once `now()` reached `timeMs` (at once if it has). */
  scheduleAt(timeMs: number, fn: () => void): Cancellable;
}

/** One per subtask; the task binds its mailbox before any operator opens. */
export class MailboxProcessingTimeService implements ProcessingTimeService {
  private putMail: ((mail: () => void) => void) | null = null;
  private readonly pending = new Set<Cancellable>();
  private disposed = false;

  constructor(
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  bindMailbox(putMail: (mail: () => void) => void): void {
    this.putMail = putMail;
  }

  now(): number {
    return this.clock.now();
  }

  scheduleAt(timeMs: number, fn: () => void): Cancellable {
    if (this.disposed) return { cancel() {} };
    let cancelled = false;
    const delayMs = Math.max(0, timeMs - this.clock.now());
    const handle: Cancellable = {
      cancel: () => {
        cancelled = true;
        this.pending.delete(handle);
        inner.cancel();
      },
    };
    const inner = this.scheduler.schedule(delayMs, () => {
      this.pending.delete(handle);
      if (cancelled || this.disposed || this.putMail === null) return;
      this.putMail(() => {
        if (!cancelled) fn();
      });
    });
    this.pending.add(handle);
    return handle;
  }

  /** Cancels everything scheduled (the subtask ended). */
  dispose(): void {
    this.disposed = true;
    for (const h of [...this.pending]) h.cancel();
  }
}
