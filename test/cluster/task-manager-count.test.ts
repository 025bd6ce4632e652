/**
 * The default number of task managers (issue 11: one per core): a pure decision from the option,
 * the cores, the job's highest parallelism, whether workers can load the job, and the storage.
 */
import { describe, expect, it } from 'vitest';
import { decideTaskManagerCount, type TaskManagerCountInputs } from '../../src/cluster/task-manager-count.ts';

const MODULE_ON_DISK: TaskManagerCountInputs = {
  requested: null,
  slotsPerTaskManager: null,
  cores: 2,
  highestParallelism: 2,
  fromJobModule: true,
  storageIsDirectory: true,
  inProcessSinks: [],
};

const decide = (changes: Partial<TaskManagerCountInputs>) => decideTaskManagerCount({ ...MODULE_ON_DISK, ...changes });

describe('decideTaskManagerCount', () => {
  it('by default: one task manager per core, capped at the highest parallelism, for a job module checkpointing to a directory', () => {
    expect(decide({})).toEqual({ taskManagers: 2, why: 'one per core', notice: null });
    expect(decide({ cores: 8, highestParallelism: 3 })).toEqual({ taskManagers: 3, why: 'one per core, capped at parallelism 3', notice: null });
    expect(decide({ cores: 4, highestParallelism: 16 })).toEqual({ taskManagers: 4, why: 'one per core', notice: null });
    expect(decide({ cores: 4, highestParallelism: 4 }).taskManagers).toBe(4);
  });

  it('by default runs in this thread, silently, where worker threads cannot or would not help', () => {
    expect(decide({ fromJobModule: false })).toEqual({ taskManagers: 1, why: 'built by a script, not a job module', notice: null });
    expect(decide({ storageIsDirectory: false })).toEqual({ taskManagers: 1, why: 'checkpoints in memory', notice: null });
    expect(decide({ highestParallelism: 1 })).toEqual({ taskManagers: 1, why: 'parallelism 1', notice: null });
    expect(decide({ cores: 1, highestParallelism: 4 })).toEqual({ taskManagers: 1, why: 'one core', notice: null });
  });

  it('a job with a CollectSink runs in this thread, where its results are read; asked for more, it says why', () => {
    expect(decide({ inProcessSinks: ['results'] })).toEqual({ taskManagers: 1, why: "sink 'results' keeps its results in this process", notice: null });
    const asked = decide({ inProcessSinks: ['results'], requested: 2 });
    expect(asked.taskManagers).toBe(1);
    expect(asked.notice).toMatch(/^taskManagers: 2: sink 'results' keeps its results in this process \(a CollectSink\)/);
    expect(decide({ inProcessSinks: ['results'], requested: 1 })).toEqual({ taskManagers: 1, why: 'taskManagers: 1', notice: null });
  });

  it('given slots per task manager, starts enough task managers to hold the job', () => {
    expect(decide({ cores: 2, highestParallelism: 6, slotsPerTaskManager: 2 })).toEqual({ taskManagers: 3, why: 'slotsPerTaskManager 2', notice: null });
    expect(decide({ cores: 2, highestParallelism: 4, slotsPerTaskManager: 2 }).taskManagers).toBe(2);
    expect(decide({ cores: 1, highestParallelism: 3, slotsPerTaskManager: 1 }).taskManagers).toBe(3);
  });

  it('an explicit count is kept; above 1 without a job module it runs in this thread with a notice', () => {
    expect(decide({ requested: 1, cores: 8, highestParallelism: 8 })).toEqual({ taskManagers: 1, why: 'taskManagers: 1', notice: null });
    expect(decide({ requested: 3, cores: 2 })).toEqual({ taskManagers: 3, why: 'taskManagers', notice: null });
    const script = decide({ requested: 2, fromJobModule: false });
    expect(script.taskManagers).toBe(1);
    expect(script.notice).toContain('taskManagers: 2 needs the job to come from a job module');
  });
});
