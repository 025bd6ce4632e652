/**
 * The job master's side of task managers: launches a pool of them for an attempt, places the
 * subtasks and deploys the attempt on them (remote-attempt.ts), keeping the pool warm for the next
 * attempt when it ended cleanly. A task manager that dies fails the attempt through the gateway, so
 * the restart strategy decides what follows exactly as for a failing subtask in this thread.
 */
import { assert } from '../../core/assert.ts';
import type { Environment } from '../../core/time.ts';
import { buildExecutionPlan, type ExecutionPlan } from '../../graph/execution-plan.ts';
import type { Deployer } from './attempt-deployment.ts';
import type { HeartbeatSettings } from './heartbeat-monitor.ts';
import { RemoteAttempt } from './remote-attempt.ts';
import { TaskManagerRoster } from './task-manager-roster.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { Placement, ToJobMaster, ToTaskManager } from '../transport/protocol.ts';

/** Where a task manager runs and what it offers, as its launcher knows it (the REST API and dashboard show it). */
export interface TaskManagerDescription {
  /** Host name of the machine it runs on. */
  readonly host: string;
  /** The operating-system process it runs in (a worker thread's is the job master's); null where it stands for one (in memory). */
  readonly pid: number | null;
  /** Slots it offers; null: as many as the placement gives it (launchers in this process without `slotsPerTaskManager`). */
  readonly slots: number | null;
  readonly transport: 'in-memory' | 'worker-thread' | 'tcp';
  /** Where other task managers reach its data plane (`host:port`); null without an address (MessagePorts, in memory). */
  readonly dataAddress: string | null;
}

/** The task managers of one attempt. */
export interface TaskManagerPool {
  readonly links: ReadonlyArray<Link<ToTaskManager, ToJobMaster>>;
  /** One per link, in the same order: filled in by every launcher. */
  readonly taskManagers: readonly TaskManagerDescription[];
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
  /** The roster of each pool launched, while it may still be used or shown. */
  const rosters = new WeakMap<TaskManagerPool, TaskManagerRoster>();
  /** The pool of the newest attempt: what the job master shows (its task managers stay listed, stopped or dead, after it). */
  let shown: TaskManagerRoster | null = null;
  /** Shuts a pool down and says so in its roster (the pool stays the launcher's own object: a launcher may key data by it). */
  const shutDown = (pool: TaskManagerPool): void => {
    rosters.get(pool)?.shutDown();
    pool.shutdown();
  };
  const keep = (pool: TaskManagerPool): void => {
    if (disposed || kept !== null) {
      shutDown(pool);
      return;
    }
    kept = pool;
    // One that dies while kept is no use to the next attempt.
    pool.onFailure((index) => {
      rosters.get(pool)?.died(index);
      if (kept === pool) kept = null;
      shutDown(pool);
    });
  };
  const deployer: Deployer = async (spec, restore, firstCheckpointFull) => {
    const warm = kept;
    kept = null;
    const pool = warm ?? (await launch());
    const roster = rosters.get(pool) ?? rosterOf(pool, env);
    rosters.set(pool, roster);
    shown = roster;
    const plan = buildExecutionPlan(spec.graph);
    let placement: Placement;
    try {
      placement = place(plan, pool);
    } catch (err) {
      shutDown(pool);
      throw err;
    }
    roster.deployed(placement, plan);
    const attempt = new RemoteAttempt(pool, roster, spec, env, watch, warm !== null, keep, placement, restore, firstCheckpointFull);
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
    if (kept !== null) shutDown(kept);
    kept = null;
  };
  deployer.taskManagers = () => shown?.statuses() ?? [];
  return deployer;
}

/** A new roster for a pool just launched: one description per task manager. */
function rosterOf(pool: TaskManagerPool, env: Environment): TaskManagerRoster {
  assert(pool.taskManagers.length === pool.links.length, () => `a pool of ${pool.links.length} task managers describes ${pool.taskManagers.length}`);
  return new TaskManagerRoster(pool.taskManagers, env.clock);
}
