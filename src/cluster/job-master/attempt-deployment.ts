/**
 * What the job master holds of one deployed attempt, wherever its subtasks run: a handle per
 * subtask to send it control messages and read its figures, and the attempt's open, start and
 * teardown. In this thread the handles are the StreamTasks themselves; with task managers they are
 * proxies that turn each call into a protocol message (remote-deployment.ts).
 */
import type { ChangelogFigures } from '../../state/changelog/figures.ts';
import type { CheckpointBarrier } from '../../checkpoint/barrier/barrier.ts';
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import type { CheckpointId, TaskId } from '../../core/ids.ts';
import type { TaskStatus } from '../../runtime/stream-task.ts';
import { deploy, type DeploymentSpec } from '../task-manager/deployment.ts';
import type { TaskManagerStatus } from './task-manager-roster.ts';

export interface TaskHandle {
  readonly id: TaskId;
  readonly name: string;
  readonly isSourceTask: boolean;
  readonly status: TaskStatus;
  readonly sourceRecordsOut: number;
  readonly sinkRecordsIn: number;
  /** Records the subtask took from its input channels. */
  readonly recordsIn: number;
  /** Records the subtask's record writers sent downstream. */
  readonly recordsWritten: number;
  /** Milliseconds the subtask spent blocked on output (backpressure), in its own clock. */
  readonly backpressuredMs: number;
  /** Its changelog backends' figures (log bytes, materializations), or null: it uses none. */
  readonly changelog: ChangelogFigures | null;
  triggerCheckpoint(barrier: CheckpointBarrier): void;
  notifyCheckpointComplete(checkpointId: CheckpointId): void;
  notifyCheckpointAborted(checkpointId: CheckpointId): void;
}

export interface AttemptDeployment {
  readonly tasks: readonly TaskHandle[];
  /** Opens every subtask's operators (state is restored by then). */
  open(): Promise<void>;
  start(): void;
  /**
   * Cancels every subtask and drops what is in flight; idempotent. Resolves once every subtask
   * stopped (task managers answered, or were terminated after their cancellation timeout).
   */
  teardown(): Promise<void>;
  /**
   * The process died (the simulator's process kill): every subtask stops at once and releases its
   * files and store handles, as the operating system would; nothing is sent, nobody answers.
   */
  abandon(): void;
}

/**
 * Builds and restores one attempt: `firstCheckpointFull` as in deployment.ts's deploy. `dispose`,
 * if present, is called once the job ended: it releases what the deployer keeps between attempts
 * (task managers kept warm for the next attempt).
 */
export type Deployer = ((spec: DeploymentSpec, restore: CheckpointMetadata | null, firstCheckpointFull: boolean) => Promise<AttemptDeployment>) & {
  dispose?: () => void;
  /** The task managers of the newest attempt, as the job master sees them now (none in this thread). */
  taskManagers?: () => readonly TaskManagerStatus[];
};

/** Every subtask in this thread, on the job master's scheduler (the default, and what the simulator runs). */
export const inThreadDeployer: Deployer = async (spec, restore, firstCheckpointFull) => {
  const d = await deploy(spec, restore, firstCheckpointFull);
  const stop = (): void => {
    for (const task of d.tasks) task.cancel();
    for (const ch of d.channels) ch.clear();
  };
  return {
    tasks: d.tasks,
    open: async () => {
      for (const task of d.tasks) await task.open();
    },
    start: () => {
      for (const task of d.tasks) task.start();
    },
    teardown: () => {
      stop();
      return Promise.resolve();
    },
    abandon: () => stop(),
  };
};
