/**
 * Which task manager runs which subtask: slot sharing as in Flink, one slot holds subtask i of
 * every vertex, and slot i goes to task manager i mod taskManagers, so the subtasks of one
 * pipeline stay together and keyed shuffles spread over every task manager. A pure function.
 */
import { ConfigError } from '../../core/errors.ts';
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
