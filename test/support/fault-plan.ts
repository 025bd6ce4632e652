import { InjectedFault } from '../../src/core/errors.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../src/runtime/faults.ts';

export interface PlannedFault {
  readonly site: FaultSite;
  /** Substring of the vertex name (chain of operator names). */
  readonly vertex: string;
  readonly subtask?: number;
  /** Fire on the nth matching call (1-based) of attempt 0. */
  readonly nth: number;
}

/** Throws InjectedFault once per planned fault, on attempt 0 only; counts what fired. */
export class FaultPlan implements FaultInjector {
  private readonly counts = new Map<PlannedFault, number>();
  readonly fired: Array<{ fault: PlannedFault; ctx: FaultContext }> = [];

  constructor(private readonly faults: readonly PlannedFault[]) {}

  check(site: FaultSite, ctx: FaultContext): void {
    if (ctx.attempt !== 0) return;
    for (const f of this.faults) {
      if (f.site !== site || !ctx.vertex.includes(f.vertex)) continue;
      if (f.subtask !== undefined && f.subtask !== ctx.subtask) continue;
      const n = (this.counts.get(f) ?? 0) + 1;
      this.counts.set(f, n);
      if (n === f.nth) {
        this.fired.push({ fault: f, ctx });
        throw new InjectedFault(`${site}@${ctx.vertex}#${ctx.subtask}`);
      }
    }
  }
}
