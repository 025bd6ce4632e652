/**
 * How many task managers a job runs on, and why: a pure decision from the `taskManagers` option
 * (given or not), the machine's cores and what the job allows. By default a job gets one task
 * manager per core, capped at its highest parallelism (a task manager without a subtask would only
 * cost a thread), when worker threads can run it: its job module is known (every worker builds the
 * graph from it) and its checkpoints go to a directory (workers cannot share memory storage).
 * Otherwise every subtask runs in the executing thread; only a user who asked for more task
 * managers explicitly is told why not.
 */

/** What the decision looks at. */
export interface TaskManagerCountInputs {
  /** `taskManagers` as the user gave it, or null when not given (the default). */
  readonly requested: number | null;
  /** `slotsPerTaskManager`, or null: as many as the job needs. */
  readonly slotsPerTaskManager: number | null;
  /** Cores of this machine (`os.availableParallelism()`). */
  readonly cores: number;
  /** The highest parallelism of the job's vertices. */
  readonly highestParallelism: number;
  /** Whether worker threads can build the job: it comes from a job module they can load. */
  readonly fromJobModule: boolean;
  /** Whether checkpoint storage is a directory (not memory). */
  readonly storageIsDirectory: boolean;
  /**
   * Names of sinks whose output lives in this process's memory (`CollectSink`): a worker thread's
   * copy of such a sink would hold the records, where nobody reads them.
   */
  readonly inProcessSinks: readonly string[];
}

/** Where a job's subtasks run. */
export interface TaskManagerCount {
  /** Task managers on worker threads; 1: every subtask in the executing thread. */
  readonly taskManagers: number;
  /** Why, in a few words, for the start line of `weir run` ("one per core", "checkpoints in memory", ...). */
  readonly why: string;
  /** Set when the user asked for more task managers than run: the one-line notice saying why. */
  readonly notice: string | null;
}

export function decideTaskManagerCount(i: TaskManagerCountInputs): TaskManagerCount {
  const highest = Math.max(1, i.highestParallelism);
  if (i.requested !== null && i.requested <= 1) return { taskManagers: 1, why: 'taskManagers: 1', notice: null };
  if (i.inProcessSinks.length > 0) {
    const sink = `sink '${i.inProcessSinks[0]}' keeps its results in this process`;
    return {
      taskManagers: 1,
      why: sink,
      notice:
        i.requested === null
          ? null
          : `taskManagers: ${i.requested}: ${sink} (a CollectSink), where worker threads cannot hand them, so all its subtasks run in this thread`,
    };
  }
  if (i.requested !== null) {
    if (!i.fromJobModule) {
      return {
        taskManagers: 1,
        why: 'built by a script, not a job module',
        notice: `taskManagers: ${i.requested} needs the job to come from a job module (weir run <module>) that every task manager can load; this job was built by a script, so all its subtasks run in this thread`,
      };
    }
    // Memory storage with taskManagers > 1 is refused when the options are resolved.
    return { taskManagers: i.requested, why: 'taskManagers', notice: null };
  }
  if (!i.fromJobModule) return { taskManagers: 1, why: 'built by a script, not a job module', notice: null };
  if (!i.storageIsDirectory) return { taskManagers: 1, why: 'checkpoints in memory', notice: null };
  if (highest === 1) return { taskManagers: 1, why: 'parallelism 1', notice: null };
  const perCore = Math.min(Math.max(1, i.cores), highest);
  // Given slots per task manager, enough task managers to hold the job even beyond one per core.
  const needed = i.slotsPerTaskManager === null ? 1 : Math.ceil(highest / i.slotsPerTaskManager);
  const taskManagers = Math.max(perCore, needed);
  if (taskManagers === 1) return { taskManagers: 1, why: 'one core', notice: null };
  const why =
    needed > perCore ? `slotsPerTaskManager ${i.slotsPerTaskManager}` : highest < i.cores ? `one per core, capped at parallelism ${highest}` : 'one per core';
  return { taskManagers, why, notice: null };
}
