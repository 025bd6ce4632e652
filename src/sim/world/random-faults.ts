/** Subtask faults drawn by the seed: a throw at a random step of user code or of a checkpoint phase. */
import { InjectedFault } from '../../core/errors.ts';
import type { Random } from '../../core/time.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../runtime/faults.ts';

export type FaultProbabilities = Readonly<Record<FaultSite, number>>;

export class RandomFaults implements FaultInjector {
  active = true;
  readonly fired: Array<{ site: FaultSite; vertex: string; subtask: number; attempt: number }> = [];

  constructor(
    private readonly random: Random,
    private readonly probabilities: FaultProbabilities,
    private readonly maxFaults: number,
  ) {}

  check(site: FaultSite, ctx: FaultContext): void {
    if (!this.active || this.fired.length >= this.maxFaults) return;
    if (this.random.next() >= this.probabilities[site]) return;
    this.fired.push({ site, vertex: ctx.vertex, subtask: ctx.subtask, attempt: ctx.attempt });
    throw new InjectedFault(site);
  }
}
