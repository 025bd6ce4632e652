/** Waiting for a running job's state, bounded by the test's timeout rather than by a count. */
import type { JobClient } from '../../src/index.ts';
import type { SourceGate } from './held-source.ts';

/** Resolves once every subtask of the job runs (checkpoints and savepoints can be triggered); rejects if it ended. */
export async function whenRunning(client: JobClient): Promise<void> {
  let ended = false;
  void client.result.then(
    () => (ended = true),
    () => (ended = true),
  );
  for (;;) {
    if (client.metrics().status === 'RUNNING') return;
    if (ended) throw new Error(`job ${client.jobId} ended (${client.metrics().status}) before it ran`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

type Completed = Awaited<ReturnType<JobClient['triggerCheckpoint']>>;

/**
 * Takes `count` checkpoints on demand, each once the gate let every one of `subtasks` source
 * subtasks emit `step` more records: the checkpoints see the input grow, whatever the machine's load.
 * Resolves with the completed checkpoints.
 */
export async function checkpointInSteps(client: JobClient, gate: SourceGate, o: { count: number; step: number; subtasks: number }): Promise<Completed[]> {
  await whenRunning(client);
  const completed: Completed[] = [];
  for (let i = 0; i < o.count; i++) {
    gate.allowUpTo(gate.limitPerSubtask + o.step);
    await gate.reached(o.subtasks);
    // A checkpoint triggered while the job finishes races its final checkpoint: keep input back.
    if (gate.endedSubtasks > 0) throw new Error(`the gate let a subtask's whole input through before checkpoint ${i + 1} of ${o.count}: use a smaller step`);
    completed.push(await client.triggerCheckpoint());
  }
  return completed;
}
