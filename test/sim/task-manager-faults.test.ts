/** The seed's task manager faults: drawn per seed, described, and off outside the fault window. */
import { describe, expect, it } from 'vitest';
import { describeKnobs, drawKnobs } from '../../src/sim/knobs.ts';
import { drawTaskManagerFaults, NO_TASK_MANAGER_FAULTS, SimTaskManagerFaults } from '../../src/sim/world/task-manager-faults.ts';

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
    const without = (k: ReturnType<typeof drawTaskManagerFaults>) => ({ ...k, deathsAtMs: [], links: [] });
    expect(drawn.map(without)).toEqual(Array.from({ length: 1_000 }, (_, i) => without(drawTaskManagerFaults(i + 1, 100, 1))));
  });

  it('kill one task manager of the newest pool that runs silently, chosen by the seed, and explain only heartbeat deaths once one died', () => {
    const faults = new SimTaskManagerFaults(9, NO_TASK_MANAGER_FAULTS);
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
      hang: (i) => {
        killed.push(i);
        return true;
      },
      kill: () => false,
      dropControl: () => false,
      dropData: () => false,
      partition: () => false,
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

  it('drop connections, cut task managers off and end their processes in about half the seeds with task managers, from a stream of their own', () => {
    const drawn = Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1, 300, 2));
    const struck = drawn.filter((k) => k.links.length > 0);
    expect(struck.length).toBeGreaterThan(400);
    expect(struck.length).toBeLessThan(600);
    const faults = struck.flatMap((k) => k.links);
    for (const kind of ['control-drop', 'data-drop', 'exit', 'partition'] as const) expect(faults.filter((f) => f.kind === kind).length).toBeGreaterThan(100);
    expect(faults.every((f) => f.atMs >= 0 && f.atMs < 300 && struck.every((k) => k.links.length <= 4))).toBe(true);
    const heals = faults.flatMap((f) => (f.kind === 'partition' ? [f.healAfterMs] : []));
    // Half heal before the job master's heartbeats could find the task manager silent, half after.
    expect(heals.filter((ms) => ms < 200).length).toBeGreaterThan(heals.length / 3);
    expect(heals.filter((ms) => ms > 250).length).toBeGreaterThan(heals.length / 3);
    expect(Array.from({ length: 1_000 }, (_, i) => drawTaskManagerFaults(i + 1, 300, 1)).every((k) => k.links.length === 0)).toBe(true);
  });

  it('strike the newest pool with the drawn fault, count what struck, and explain the failures each causes', () => {
    const faults = new SimTaskManagerFaults(4, NO_TASK_MANAGER_FAULTS);
    const calls: string[] = [];
    expect(faults.strike({ kind: 'exit', atMs: 0 })).toBeNull();
    faults.launched({
      count: 3,
      down: false,
      hang: () => false,
      kill: (i) => calls.push(`kill ${i}`) > 0,
      dropControl: (i) => calls.push(`drop control ${i}`) > 0,
      dropData: (a, b) => calls.push(`drop data ${a} ${b}`) > 0,
      partition: (i, ms) => calls.push(`partition ${i} ${ms}`) > 0,
    });
    const closed = new Error('task manager 1 died: control connection closed: connection reset');
    const data = new Error("subtask 0 of 'gen': data connection to task manager 2 lost: connection reset");
    const silent = new Error('task manager 1 died: no heartbeat answered for 210 ms (heartbeat.timeoutMs 200)');
    expect([closed, data, silent].map((e) => faults.explains(e))).toEqual([false, false, false]);
    expect(faults.strike({ kind: 'control-drop', atMs: 0 })).toMatch(/^the control connection of task manager \d dropped$/);
    expect(faults.strike({ kind: 'data-drop', atMs: 0 })).toMatch(/^the data connection between task managers \d and \d dropped$/);
    expect(faults.strike({ kind: 'partition', atMs: 0, healAfterMs: 300 })).toMatch(/^task manager \d is cut off for 300\.0ms$/);
    expect(faults.strike({ kind: 'exit', atMs: 0 })).toMatch(/^the process of task manager \d exited$/);
    expect(calls).toHaveLength(4);
    const data0 = calls[1]!.split(' ').slice(2).map(Number);
    expect(data0[0]).not.toBe(data0[1]);
    expect([faults.controlDrops, faults.dataDrops, faults.partitions, faults.exits]).toEqual([1, 1, 1, 1]);
    expect([closed, data, silent].map((e) => faults.explains(new Error('attempt failed', { cause: e })))).toEqual([true, true, true]);
    faults.healed(1);
    faults.lostJobMaster(1, false);
    faults.lostJobMaster(1, true);
    expect([faults.partitionsHealed, faults.partitionsOutlived]).toEqual([1, 1]);
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
    const faults = new SimTaskManagerFaults(1, {
      ...NO_TASK_MANAGER_FAULTS,
      stallProbability: 1,
      cancelStallProbability: 1,
      stallMsMax: 10,
      stuckOnCancelProbability: 1,
    });
    expect(faults.dataStallMs(0, 'message')).toBe(0);
    expect(faults.stuckOnCancel(0)).toBe(false);
    faults.active = true;
    const stall = faults.dataStallMs(0, 'cancel');
    expect(stall).toBeGreaterThanOrEqual(1);
    expect(stall).toBeLessThanOrEqual(11);
    expect([0, 1, 2, 3, 4].map((i) => faults.stuckOnCancel(i))).toEqual([true, true, true, false, false]);
  });
});
