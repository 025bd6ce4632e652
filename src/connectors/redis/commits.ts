/**
 * The Redis sink's bookkeeping: a sorted set per sink, `weir:sink-commits:<sink id>`, whose
 * members are the ids of committed transactions scored by checkpoint id. A transaction's entries
 * and its member are written in one MULTI/EXEC, watched on the set, so the member exists exactly
 * when the entries do: a repeated commit (after a restore) finds it and writes nothing.
 */

/** Members of checkpoints this many ids older than the one committed are pruned. */
export const RETAINED_CHECKPOINT_IDS = 1000;

/** The sorted set holding a sink's committed transaction ids. */
export function commitsKey(sinkId: string): string {
  return `weir:sink-commits:${sinkId}`;
}

/** The id of the transaction subtask `subtask` of run `runId` pre-commits for `checkpointId`: unique across runs and processes. */
export function transactionId(subtask: number, checkpointId: number, runId: string): string {
  return `${subtask}:${checkpointId}:${runId}`;
}
