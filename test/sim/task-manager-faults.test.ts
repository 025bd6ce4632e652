/** The seed's task manager faults: drawn per seed, described, and off outside the fault window. */
import { describe, expect, it } from 'vitest';
import { describeKnobs, drawKnobs } from '../../src/sim/knobs.ts';
import { drawTaskManagerFaults, SimTaskManagerFaults } from '../../src/sim/world/task-manager-faults.ts';

describe('simulator task manager faults', () => {
  it('are drawn from the seed alone: about half the seeds stall data links, about a third get stuck on cancel', () => {
    expect(drawTaskManagerFaults(5)).toEqual(drawTaskManagerFaults(5));
    const drawn = Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1));
    const stalls = drawn.filter((k) => k.stallProbability > 0).length;
    const stuck = drawn.filter((k) => k.stuckOnCancelProbability > 0).length;
    expect(stalls).toBeGreaterThan(400);
    expect(stalls).toBeLessThan(600);
    expect(stuck).toBeGreaterThan(250);
    expect(stuck).toBeLessThan(450);
  });

  it('are named in the knobs of seeds with task managers', () => {
    const inputs = { job: 'join', mode: 'exactly-once' as const, builtIn: true };
    const seed = Array.from({ length: 100 }, (_, i) => i + 1).find((s) => {
      const k = drawKnobs(s, inputs);
      return k.taskManagers > 1 && k.faults.taskManagers.stuckOnCancelProbability > 0;
    })!;
    expect(describeKnobs(drawKnobs(seed, inputs)).some((l) => /^ {2}task managers: .*stuck on cancel with 0\.3/.test(l))).toBe(true);
  });

  it('inject nothing while inactive, and at most three stuck task managers per seed', () => {
    const faults = new SimTaskManagerFaults(1, { stallProbability: 1, cancelStallProbability: 1, stallMsMax: 10, stuckOnCancelProbability: 1 });
    expect(faults.dataStallMs(0, 'message')).toBe(0);
    expect(faults.stuckOnCancel(0)).toBe(false);
    faults.active = true;
    const stall = faults.dataStallMs(0, 'cancel');
    expect(stall).toBeGreaterThanOrEqual(1);
    expect(stall).toBeLessThanOrEqual(11);
    expect([0, 1, 2, 3, 4].map((i) => faults.stuckOnCancel(i))).toEqual([true, true, true, false, false]);
  });
});
