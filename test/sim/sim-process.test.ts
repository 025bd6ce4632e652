import { describe, expect, it } from 'vitest';
import { SimProcess } from '../../src/sim/world/sim-process.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';

function drain(world: SimWorld): void {
  for (let i = 0; i < 1000 && world.step(); i++);
}

describe('a simulated process paused (SIGSTOP) and resumed', () => {
  it('runs nothing while paused; what came due runs at the resume', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const p = new SimProcess(world, 1);
    const ran: string[] = [];
    p.schedule(5, () => ran.push('a@5'));
    p.pause();
    p.schedule(1, () => ran.push('b@1'));
    p.execute(() => ran.push('c'));
    p.schedule(3, () => ran.push('d@3'));
    world.schedule(10, () => ran.push('world@10'));
    drain(world);
    expect(ran).toEqual(['world@10']);
    expect(p.isPaused).toBe(true);
    p.resume();
    drain(world);
    // Everything held ran at the resume (in the order the world fired it, which the seed decides).
    expect(ran[0]).toBe('world@10');
    expect(ran.slice(1).sort()).toEqual(['a@5', 'b@1', 'c', 'd@3']);
    p.schedule(1, () => ran.push('after'));
    drain(world);
    expect(ran.at(-1)).toBe('after');
  });

  it('a process killed while paused runs none of what it held', () => {
    const world = new SimWorld(2, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const p = new SimProcess(world, 1);
    const ran: string[] = [];
    p.pause();
    p.schedule(1, () => ran.push('held'));
    drain(world);
    p.kill();
    p.resume();
    drain(world);
    expect(ran).toEqual([]);
  });
});
