/**
 * Which task manager runs which subtask: slot sharing as in Flink, one slot holds subtask i of
 * every vertex, and slot i goes to task manager i mod taskManagers, so the subtasks of one
 * pipeline stay together and keyed shuffles spread over every task manager. A pure function.
 */
import { ClusterError, ConfigError } from '../../core/errors.ts';
import type { ExecutionPlan } from '../../graph/execution-plan.ts';
import type { Placement } from '../transport/protocol.ts';

export function placeSubtasks(plan: ExecutionPlan, taskManagers: number, slotsPerTaskManager: number | null): Placement {
  const slotsNeeded = Math.max(1, ...plan.subtasks.map((s) => s.subtask + 1));
  if (slotsPerTaskManager !== null && slotsPerTaskManager * taskManagers < slotsNeeded) {
    throw new ConfigError(
      'slotsPerTaskManager',
      `${taskManagers} task managers x ${slotsPerTaskManager} slots hold ${taskManagers * slotsPerTaskManager} subtasks of a vertex, the job's highest parallelism is ${slotsNeeded}`,
    );
  }
  return { taskManagers, ofSubtask: plan.subtasks.map((s) => s.subtask % taskManagers) };
}

/**
 * Placement on task managers that offer different numbers of slots (task managers that joined over
 * TCP, each with its own `--slots`): slot i of the job goes to the next task manager, round robin,
 * that still has a free slot, so the job spreads over all of them as evenly as their slots allow.
 * @throws ClusterError (CLUSTER_SLOT_SHORTAGE) when their slots together cannot hold the job.
 */
export function placeOnSlots(plan: ExecutionPlan, slots: readonly number[]): Placement {
  const slotsNeeded = Math.max(1, ...plan.subtasks.map((s) => s.subtask + 1));
  const total = slots.reduce((a, b) => a + b, 0);
  if (total < slotsNeeded)
    throw new ClusterError(
      'CLUSTER_SLOT_SHORTAGE',
      `${slots.length} task managers`,
      `they offer ${total} slots, the job's highest parallelism is ${slotsNeeded}`,
    );
  const left = [...slots];
  const owner: number[] = [];
  let next = 0;
  for (let slot = 0; slot < slotsNeeded; slot++) {
    while (left[next] === 0) next = (next + 1) % left.length;
    owner.push(next);
    left[next]!--;
    next = (next + 1) % left.length;
  }
  return { taskManagers: slots.length, ofSubtask: plan.subtasks.map((s) => owner[s.subtask]!) };
}
