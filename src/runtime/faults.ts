/**
 * The fault-injection seam. The runtime asks the injector at each named site; production passes
 * NO_FAULTS, tests and the simulator pass injectors that throw InjectedFault.
 */
export type FaultSite =
  | 'process' // before a task processes an input buffer or source batch (user code)
  | 'sync-phase' // inside the sync part of a snapshot
  | 'async-phase' // inside the async part, after the state files were written
  | 'before-ack' // after the snapshot, before the ack leaves the task
  | 'commit'; // while a sink commits on notifyCheckpointComplete

export interface FaultContext {
  readonly vertex: string;
  readonly subtask: number;
  readonly attempt: number;
  readonly checkpointId?: number;
}

export interface FaultInjector {
  /** Throws InjectedFault when a fault is due here. */
  check(site: FaultSite, ctx: FaultContext): void;
}

export const NO_FAULTS: FaultInjector = { check: () => {} };
