import { describe, expect, it } from 'vitest';
import { placeOnSlots } from '../../../src/cluster/job-master/placement.ts';
import type { ExecutionPlan } from '../../../src/graph/execution-plan.ts';

/** A plan with vertices of the given parallelisms (only what placement reads). */
function plan(...parallelisms: number[]): ExecutionPlan {
  const subtasks = parallelisms.flatMap((p, vertex) => Array.from({ length: p }, (_, subtask) => ({ vertex, subtask })));
  return { subtasks } as unknown as ExecutionPlan;
}

describe('placeOnSlots (task managers offering their own number of slots)', () => {
  it('spreads slots round robin over task managers while they have free slots', () => {
    const p = placeOnSlots(plan(4, 4), [2, 2]);
    expect(p.taskManagers).toBe(2);
    // slot i holds subtask i of every vertex: 0 -> tm 0, 1 -> tm 1, 2 -> tm 0, 3 -> tm 1
    expect(p.ofSubtask).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
  });

  it('skips a task manager whose slots are taken', () => {
    const p = placeOnSlots(plan(4), [1, 3]);
    expect(p.ofSubtask).toEqual([0, 1, 1, 1]);
  });

  it('keeps a task manager without a subtask in the pool', () => {
    const p = placeOnSlots(plan(1, 1), [4, 4, 4]);
    expect(p.taskManagers).toBe(3);
    expect(p.ofSubtask).toEqual([0, 0]);
  });

  it('refuses slots that cannot hold the highest parallelism, naming both figures', () => {
    expect(() => placeOnSlots(plan(2, 5), [2, 2])).toThrow(
      expect.objectContaining({ code: 'CLUSTER_SLOT_SHORTAGE', message: expect.stringContaining("offer 4 slots, the job's highest parallelism is 5") }),
    );
  });
});
