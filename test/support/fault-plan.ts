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

const planned = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

/** One fault per site of the two-input job (jobs.ts buildTwoInputJob), each to recover from exactly once. */
export const TWO_INPUT_JOB_FAULTS: readonly PlannedFault[] = [
  planned('process', 'keyed-co-process', 40, 1),
  planned('process', 'map-b', 25, 1),
  planned('sync-phase', 'keyed-co-process', 2, 2),
  planned('async-phase', 'keyed-co-process', 1, 1),
  planned('before-ack', 'map-b', 2, 1),
  planned('commit', 'keyed-co-process', 2, 1),
];
