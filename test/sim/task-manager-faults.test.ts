/** The seed's task manager faults: drawn per seed, described, and off outside the fault window. */
import { describe, expect, it } from 'vitest';
import { describeKnobs, drawKnobs } from '../../src/sim/knobs.ts';
import { drawTaskManagerFaults, SimTaskManagerFaults } from '../../src/sim/world/task-manager-faults.ts';

describe('simulator task manager faults', () => {
  it('are drawn from the seed alone: about half the seeds stall data links, about a third get stuck on cancel', () => {
    expect(drawTaskManagerFaults(5, 300, 2)).toEqual(drawTaskManagerFaults(5, 300, 2));
    const drawn = Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1, 300, 2));
    const stalls = drawn.filter((k) => k.stallProbability > 0).length;
    const stuck = drawn.filter((k) => k.stuckOnCancelProbability > 0).length;
    expect(stalls).toBeGreaterThan(400);
    expect(stalls).toBeLessThan(600);
    expect(stuck).toBeGreaterThan(250);
    expect(stuck).toBeLessThan(450);
  });

  it('kill a task manager alone in about a quarter of the seeds with task managers, from a stream of their own', () => {
    const drawn = Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1, 300, 3));
    const dying = drawn.filter((k) => k.deathsAtMs.length > 0);
    expect(dying.length).toBeGreaterThan(200);
    expect(dying.length).toBeLessThan(300);
    expect(drawn.filter((k) => k.deathsAtMs.length === 2).length).toBeGreaterThan(90);
    expect(drawn.every((k) => k.deathsAtMs.every((ms) => ms >= 0 && ms < 300))).toBe(true);
    // In this thread nothing can die alone; and the other faults drew the same with or without the new stream.
    expect(Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1, 300, 1)).every((k) => k.deathsAtMs.length === 0)).toBe(true);
    const without = (k: ReturnType<typeof drawTaskManagerFaults>) => ({ ...k, deathsAtMs: [] });
    expect(drawn.map(without)).toEqual(Array.from({ length: 1_000 }, (_, i) => without(drawTaskManagerFaults(i + 1, 100, 1))));
  });

  it('kill one task manager of the newest pool that runs, chosen by the seed, and explain only heartbeat deaths once one died', () => {
    const faults = new SimTaskManagerFaults(9, { stallProbability: 0, cancelStallProbability: 0, stallMsMax: 0, stuckOnCancelProbability: 0, deathsAtMs: [] });
    const heartbeatDeath = new Error('task manager 1 died: no heartbeat answered for 210 ms (heartbeat.timeoutMs 200)');
    expect(faults.killOne()).toBeNull();
    expect(faults.explains(heartbeatDeath)).toBe(false);
    const killed: number[] = [];
    let down = false;
    faults.launched({
      count: 3,
      get down() {
        return down;
      },
      kill: (i) => {
        killed.push(i);
        return true;
      },
    });
    const index = faults.killOne();
    expect(index).not.toBeNull();
    expect(killed).toEqual([index]);
    expect(faults.deaths).toBe(1);
    expect(faults.explains(new Error('attempt failed', { cause: heartbeatDeath }))).toBe(true);
    expect(faults.explains(new Error('something else'))).toBe(false);
    down = true;
    expect(faults.killOne()).toBeNull();
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
    const faults = new SimTaskManagerFaults(1, { stallProbability: 1, cancelStallProbability: 1, stallMsMax: 10, stuckOnCancelProbability: 1, deathsAtMs: [] });
    expect(faults.dataStallMs(0, 'message')).toBe(0);
    expect(faults.stuckOnCancel(0)).toBe(false);
    faults.active = true;
    const stall = faults.dataStallMs(0, 'cancel');
    expect(stall).toBeGreaterThanOrEqual(1);
    expect(stall).toBeLessThanOrEqual(11);
    expect([0, 1, 2, 3, 4].map((i) => faults.stuckOnCancel(i))).toEqual([true, true, true, false, false]);
  });
});
