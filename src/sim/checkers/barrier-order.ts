/**
 * Checker (barrier order): on every lane (a subtask attempt of one process, and so each of its
 * output channels) checkpoint barriers carry strictly increasing ids, and a subtask never takes
 * the snapshot of an older checkpoint after a newer one. A source subtask that receives a
 * delayed trigger for checkpoint n after it emitted the barrier of m > n must decline n; emitting
 * barrier n after m breaks the order downstream (the output multiset may still match, so the
 * other checkers do not see it).
 *
 * Observed through the fault-injection seam: every snapshot passes the 'sync-phase' site with its
 * checkpoint id before the barrier leaves the subtask, so the injector the simulator hands the
 * runtime records the ids per subtask attempt at no cost to production (which passes NO_FAULTS).
 */
import type { FaultContext, FaultInjector, FaultSite } from '../../runtime/faults.ts';

const PROBLEMS_MAX = 10;

export class BarrierOrder {
  private readonly last = new Map<string, number>();
  readonly problems: string[] = [];

  /** Records barrier `checkpointId` on `lane`; reports it when it is not newer than the lane's last one. */
  record(lane: string, checkpointId: number): void {
    const before = this.last.get(lane);
    if (before !== undefined && checkpointId <= before) {
      if (this.problems.length < PROBLEMS_MAX) this.problems.push(`${lane}: barrier of checkpoint ${checkpointId} after checkpoint ${before}`);
      return;
    }
    this.last.set(lane, checkpointId);
  }

  /** An injector that records each snapshot's checkpoint id per subtask attempt of process `pid`, then asks `inner`. */
  observe(pid: number | string, inner: FaultInjector): FaultInjector {
    return {
      check: (site: FaultSite, ctx: FaultContext) => {
        if (site === 'sync-phase' && ctx.checkpointId !== undefined) {
          this.record(`process ${pid} ${ctx.vertex}#${ctx.subtask} attempt ${ctx.attempt}`, ctx.checkpointId);
        }
        inner.check(site, ctx);
      },
    };
  }
}

/** Checks whole barrier sequences, one per lane. */
export function checkBarrierOrder(lanes: ReadonlyMap<string, readonly number[]>): string[] {
  const order = new BarrierOrder();
  for (const [lane, ids] of lanes) for (const id of ids) order.record(lane, id);
  return order.problems;
}
