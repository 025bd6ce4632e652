/**
 * How many task managers a job runs on, and why: a pure decision from the `taskManagers` option
 * (given or not), the machine's cores and what the job allows. A job that comes from a job module
 * (`weir run`; every worker builds the graph from it) runs its subtasks on task managers in worker
 * threads, at least one even at parallelism 1, so no user function runs on the job master's thread:
 * one stuck in user code is terminated by the cancellation watchdog while the control plane (control
 * endpoint, REST API, dashboard) keeps answering. By default it gets one task manager per core,
 * capped at its highest parallelism (a task manager without a subtask would only cost a thread).
 * Otherwise every subtask runs in the executing thread: a script without a job module, a job with an
 * in-process sink, or `taskManagers: 'in-thread'` asked for explicitly (which gives up that
 * guarantee). Only a user who asked for task managers explicitly is told why they do not run.
 */

/** What the decision looks at. */
export interface TaskManagerCountInputs {
  /** `taskManagers` as the user gave it, or null when not given (the default). */
  readonly requested: number | 'in-thread' | null;
  /** `slotsPerTaskManager`, or null: as many as the job needs. */
  readonly slotsPerTaskManager: number | null;
  /** Cores of this machine (`os.availableParallelism()`). */
  readonly cores: number;
  /** The highest parallelism of the job's vertices. */
  readonly highestParallelism: number;
  /** Whether worker threads can build the job: it comes from a job module they can load. */
  readonly fromJobModule: boolean;
  /**
   * Names of sinks whose output lives in this process's memory (`CollectSink`): a worker thread's
   * copy of such a sink would hold the records, where nobody reads them.
   */
  readonly inProcessSinks: readonly string[];
}

/** Where a job's subtasks run. */
export interface TaskManagerCount {
  /** Task managers on worker threads (>= 1); 0: every subtask in the executing thread. */
  readonly taskManagers: number;
  /** Why, in a few words, for the start line of `weir run` ("one per core", "parallelism 1", ...). */
  readonly why: string;
  /** Set when the user asked for task managers that do not run: the one-line notice saying why. */
  readonly notice: string | null;
}

export function decideTaskManagerCount(i: TaskManagerCountInputs): TaskManagerCount {
  const highest = Math.max(1, i.highestParallelism);
  if (i.requested === 'in-thread') return { taskManagers: 0, why: "taskManagers: 'in-thread'", notice: null };
  if (i.inProcessSinks.length > 0) {
    const sink = `sink '${i.inProcessSinks[0]}' keeps its results in this process`;
    return {
      taskManagers: 0,
      why: sink,
      notice:
        i.requested === null
          ? null
          : `taskManagers: ${i.requested}: ${sink} (a CollectSink), where worker threads cannot hand them, so all its subtasks run in this thread`,
    };
  }
  if (!i.fromJobModule) {
    const why = 'built by a script, not a job module';
    // A script's `taskManagers: 1` meant "in this thread" before task managers ran at parallelism 1: no notice.
    if (i.requested === null || i.requested <= 1) return { taskManagers: 0, why, notice: null };
    return {
      taskManagers: 0,
      why,
      notice: `taskManagers: ${i.requested} needs the job to come from a job module (weir run <module>) that every task manager can load; this job was built by a script, so all its subtasks run in this thread`,
    };
  }
  if (i.requested !== null) return { taskManagers: i.requested, why: 'taskManagers', notice: null };
  const perCore = Math.min(Math.max(1, i.cores), highest);
  // Given slots per task manager, enough task managers to hold the job even beyond one per core.
  const needed = i.slotsPerTaskManager === null ? 1 : Math.ceil(highest / i.slotsPerTaskManager);
  const taskManagers = Math.max(perCore, needed);
  if (needed > perCore) return { taskManagers, why: `slotsPerTaskManager ${i.slotsPerTaskManager}`, notice: null };
  if (highest === 1) return { taskManagers, why: 'parallelism 1', notice: null };
  if (perCore === 1) return { taskManagers, why: 'one core', notice: null };
  return { taskManagers, why: highest < i.cores ? `one per core, capped at parallelism ${highest}` : 'one per core', notice: null };
}
