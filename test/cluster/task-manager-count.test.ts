/**
 * Where a job's subtasks run (one task manager per core; a job module never runs user code on the
 * job master's thread, where a stuck function would freeze the control plane, so at parallelism 1
 * too it gets one task manager): a pure
 * decision from the option, the cores, the job's highest parallelism, whether workers can load the
 * job, and its in-process sinks.
 */
import { describe, expect, it } from 'vitest';
import { decideTaskManagerCount, type TaskManagerCountInputs } from '../../src/cluster/launchers/task-manager-count.ts';

const MODULE: TaskManagerCountInputs = {
  requested: null,
  slotsPerTaskManager: null,
  cores: 2,
  highestParallelism: 2,
  fromJobModule: true,
  inProcessSinks: [],
};

const decide = (changes: Partial<TaskManagerCountInputs>) => decideTaskManagerCount({ ...MODULE, ...changes });

describe('decideTaskManagerCount', () => {
  it('by default: one task manager per core, capped at the highest parallelism, for a job module', () => {
    expect(decide({})).toEqual({ taskManagers: 2, why: 'one per core', notice: null });
    expect(decide({ cores: 8, highestParallelism: 3 })).toEqual({ taskManagers: 3, why: 'one per core, capped at parallelism 3', notice: null });
    expect(decide({ cores: 4, highestParallelism: 16 })).toEqual({ taskManagers: 4, why: 'one per core', notice: null });
    expect(decide({ cores: 4, highestParallelism: 4 }).taskManagers).toBe(4);
  });

  it('a job module gets at least one task manager on a worker thread: at parallelism 1, on one core', () => {
    expect(decide({ highestParallelism: 1 })).toEqual({ taskManagers: 1, why: 'parallelism 1', notice: null });
    expect(decide({ highestParallelism: 1, cores: 8 })).toEqual({ taskManagers: 1, why: 'parallelism 1', notice: null });
    expect(decide({ cores: 1, highestParallelism: 4 })).toEqual({ taskManagers: 1, why: 'one core', notice: null });
    expect(decide({ requested: 1, cores: 8, highestParallelism: 8 })).toEqual({ taskManagers: 1, why: 'taskManagers', notice: null });
  });

  it("runs in this thread, silently, for a script, or when asked with taskManagers: 'in-thread'", () => {
    expect(decide({ fromJobModule: false })).toEqual({ taskManagers: 0, why: 'built by a script, not a job module', notice: null });
    expect(decide({ fromJobModule: false, requested: 1 })).toEqual({ taskManagers: 0, why: 'built by a script, not a job module', notice: null });
    expect(decide({ requested: 'in-thread' })).toEqual({ taskManagers: 0, why: "taskManagers: 'in-thread'", notice: null });
    expect(decide({ requested: 'in-thread', highestParallelism: 4, cores: 4 }).taskManagers).toBe(0);
  });

  it('a job with a CollectSink runs in this thread, where its results are read; asked for task managers, it says why', () => {
    expect(decide({ inProcessSinks: ['results'] })).toEqual({ taskManagers: 0, why: "sink 'results' keeps its results in this process", notice: null });
    const asked = decide({ inProcessSinks: ['results'], requested: 2 });
    expect(asked.taskManagers).toBe(0);
    expect(asked.notice).toMatch(/^taskManagers: 2: sink 'results' keeps its results in this process \(a CollectSink\)/);
  });

  it('given slots per task manager, starts enough task managers to hold the job', () => {
    expect(decide({ cores: 2, highestParallelism: 6, slotsPerTaskManager: 2 })).toEqual({ taskManagers: 3, why: 'slotsPerTaskManager 2', notice: null });
    expect(decide({ cores: 2, highestParallelism: 4, slotsPerTaskManager: 2 }).taskManagers).toBe(2);
    expect(decide({ cores: 1, highestParallelism: 3, slotsPerTaskManager: 1 }).taskManagers).toBe(3);
  });

  it('an explicit count is kept; without a job module it runs in this thread, with a notice above 1', () => {
    expect(decide({ requested: 3, cores: 2 })).toEqual({ taskManagers: 3, why: 'taskManagers', notice: null });
    const script = decide({ requested: 2, fromJobModule: false });
    expect(script.taskManagers).toBe(0);
    expect(script.notice).toContain('taskManagers: 2 needs the job to come from a job module');
  });
});
