/**
 * Time a subtask spent blocked on output (a channel without credit): what the dashboard and
 * `/jobs/:id/backpressure` show as its backpressure. The task reports a block when a step stops
 * for lack of credit and its end when a step finds credit again, so the cost is per step, never
 * per record.
 */
export class BackpressureMeter {
  private totalMs = 0;
  private blockedSinceMs: number | null = null;

  /** A step stopped because an output channel had no credit. */
  blocked(nowMs: number): void {
    if (this.blockedSinceMs === null) this.blockedSinceMs = nowMs;
  }

  /** A step found credit on every output again. */
  unblocked(nowMs: number): void {
    if (this.blockedSinceMs === null) return;
    this.totalMs += nowMs - this.blockedSinceMs;
    this.blockedSinceMs = null;
  }

  /** Milliseconds blocked so far, counting a block still in progress up to `nowMs`. */
  blockedMs(nowMs: number): number {
    return this.totalMs + (this.blockedSinceMs === null ? 0 : nowMs - this.blockedSinceMs);
  }
}
