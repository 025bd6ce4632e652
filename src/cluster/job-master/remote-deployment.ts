/**
 * The job master's side of task managers: launches a pool of them for an attempt, places the
 * subtasks and deploys the attempt on them (remote-attempt.ts), keeping the pool warm for the next
 * attempt when it ended cleanly. A task manager that dies fails the attempt through the gateway, so
 * the restart strategy decides what follows exactly as for a failing subtask in this thread.
 */
import type { Environment } from '../../core/time.ts';
import { buildExecutionPlan, type ExecutionPlan } from '../../graph/execution-plan.ts';
import type { Deployer } from './attempt-deployment.ts';
import type { HeartbeatSettings } from './heartbeat-monitor.ts';
import { RemoteAttempt } from './remote-attempt.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { Placement, ToJobMaster, ToTaskManager } from '../transport/protocol.ts';

/** The task managers of one attempt. */
export interface TaskManagerPool {
  readonly links: ReadonlyArray<Link<ToTaskManager, ToJobMaster>>;
  /** Called when a task manager dies (throws, exits) before shutdown. */
  onFailure(handler: (index: number, error: Error) => void): void;
  /** Ends every task manager (terminates worker threads); idempotent. */
  shutdown(): void;
}

export type LaunchTaskManagers = () => Promise<TaskManagerPool>;

/** How the job master watches its task managers. */
export interface TaskManagerWatch {
  readonly heartbeat: HeartbeatSettings;
  /**
   * Milliseconds a task manager has to answer `cancel` (every subtask stopped) before it is
   * terminated: a subtask stuck in user code never lets it answer (Flink's task cancellation watchdog).
   */
  readonly cancellationTimeoutMs: number;
}

/**
 * Deploys each attempt on task managers. Warm task managers: when an attempt ends with every task
 * manager alive and answering (a subtask failed, not a task manager), they are kept for the next
 * attempt instead of being terminated and started again (a worker thread loads Weir and the job
 * module: seconds); one that died or was terminated by the watchdog makes the next attempt start
 * fresh ones. `dispose` ends the kept ones once the job ended.
 */
export function remoteDeployer(
  launch: LaunchTaskManagers,
  /** Where each subtask runs on the pool an attempt got (task managers over TCP differ in slots). */
  place: (plan: ExecutionPlan, pool: TaskManagerPool) => Placement,
  env: Environment,
  watch: TaskManagerWatch,
): Deployer {
  let kept: TaskManagerPool | null = null;
  let disposed = false;
  const keep = (pool: TaskManagerPool): void => {
    if (disposed || kept !== null) {
      pool.shutdown();
      return;
    }
    kept = pool;
    // One that dies while kept is no use to the next attempt.
    pool.onFailure(() => {
      if (kept === pool) kept = null;
      pool.shutdown();
    });
  };
  const deployer: Deployer = async (spec, restore, firstCheckpointFull) => {
    const warm = kept;
    kept = null;
    const pool = warm ?? (await launch());
    let placement: Placement;
    try {
      placement = place(buildExecutionPlan(spec.graph), pool);
    } catch (err) {
      pool.shutdown();
      throw err;
    }
    const attempt = new RemoteAttempt(pool, spec, env, watch, warm !== null, keep, placement, restore, firstCheckpointFull);
    try {
      await attempt.deploy();
    } catch (err) {
      await attempt.teardown();
      throw err;
    }
    return attempt;
  };
  deployer.dispose = () => {
    disposed = true;
    kept?.shutdown();
    kept = null;
  };
  return deployer;
}
