/**
 * A task manager's context from what it built itself (its job graph, state backends and storage
 * client) and how it runs: the one assembly for task managers in worker threads and in memory.
 * A subtask writes checkpoint n through its own storage client's stream factory, or, for a
 * savepoint, into the directory its barrier names (the job master created it; no task manager can
 * reach the coordinator's savepoint target object).
 */
import type { Environment } from '../../core/time.ts';
import type { JobGraph } from '../../graph/job-graph.ts';
import type { FaultInjector } from '../../runtime/faults.ts';
import type { StateBackendFactory } from '../../state/backend.ts';
import type { CheckpointStorage } from '../../storage/storage.ts';
import type { TaskManagerContext } from './task-manager.ts';

/** What a task manager built from the job: its own, never the job master's. */
export interface TaskManagerParts {
  readonly graph: JobGraph;
  readonly backends: StateBackendFactory;
  readonly storage: CheckpointStorage;
}

/** The figures of the options a task manager runs with. */
export interface TaskManagerSettings {
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  readonly remoteChannelCapacity: number;
}

/**
 * What every task manager is told about the job besides where its code is, wherever it runs (a
 * worker thread, another process): plain data, the options included (as the job master was given them).
 */
export interface TaskManagerJobData {
  readonly options: Readonly<Record<string, unknown>>;
  readonly jobId: string;
  readonly allowNonRestoredState: boolean;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
}

/** How the job runs there: the thread's world and the run's settings. */
export interface TaskManagerRun {
  readonly env: Environment;
  readonly faults: FaultInjector;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
  readonly allowNonRestoredState: boolean;
}

export function taskManagerContext(index: number, parts: TaskManagerParts, settings: TaskManagerSettings, run: TaskManagerRun): TaskManagerContext {
  const { storage } = parts;
  return {
    index,
    graph: parts.graph,
    env: run.env,
    backends: parts.backends,
    storage,
    streams: (id, options) =>
      options.targetLocation === undefined ? storage.streamFactory(id) : storage.savepointTargetAt(options.targetLocation).streamFactory(id),
    faults: run.faults,
    bufferRecords: settings.bufferRecords,
    channelCapacity: settings.channelCapacity,
    remoteChannelCapacity: settings.remoteChannelCapacity,
    elementsPerStep: run.elementsPerStep,
    sourceBatchRecords: run.sourceBatchRecords,
    allowNonRestoredState: run.allowNonRestoredState,
  };
}
