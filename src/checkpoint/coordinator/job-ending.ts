/**
 * How a job's checkpointing ends, as one explicit state with pure transitions: periodic
 * checkpoints while running; a stop-with-savepoint in flight; every source ended and a final
 * checkpoint wanted; the final checkpoint in flight; finished once it (or the stop) completed.
 */
import type { CheckpointId } from '../../core/ids.ts';

export type Ending =
  | { readonly phase: 'running' }
  /** A stop-with-savepoint is in flight; `endOfData`: every source ended meanwhile. */
  | { readonly phase: 'stopping'; readonly savepointId: CheckpointId; readonly endOfData: boolean }
  /** Every source ended: a final checkpoint is wanted and none is in flight. */
  | { readonly phase: 'end-of-data' }
  | { readonly phase: 'final-pending'; readonly checkpointId: CheckpointId }
  /** The final checkpoint or the stop-with-savepoint completed: nothing more is triggered. */
  | { readonly phase: 'finished'; readonly checkpointId: CheckpointId };

export const RUNNING: Ending = { phase: 'running' };

/** Periodic checkpoints run only in the plain running phase. */
export function periodicAllowed(e: Ending): boolean {
  return e.phase === 'running';
}

export function onEndOfData(e: Ending): Ending {
  if (e.phase === 'running') return { phase: 'end-of-data' };
  if (e.phase === 'stopping') return { ...e, endOfData: true };
  return e;
}

/** A stop-with-savepoint may start while running or after the end of data; null: the job is already stopping or finishing. */
export function onStopRequested(e: Ending, savepointId: CheckpointId): Ending | null {
  if (e.phase === 'running' || e.phase === 'end-of-data') return { phase: 'stopping', savepointId, endOfData: e.phase === 'end-of-data' };
  return null;
}

export function onFinalTriggered(e: Ending, checkpointId: CheckpointId): Ending {
  return e.phase === 'end-of-data' ? { phase: 'final-pending', checkpointId } : e;
}

/** A failed stop lets the job go on (or wait for its final checkpoint); a failed final checkpoint is wanted again. */
export function onAborted(e: Ending, checkpointId: CheckpointId): Ending {
  if (e.phase === 'stopping' && e.savepointId === checkpointId) return e.endOfData ? { phase: 'end-of-data' } : RUNNING;
  if (e.phase === 'final-pending' && e.checkpointId === checkpointId) return { phase: 'end-of-data' };
  return e;
}

export function onCompleted(e: Ending, checkpointId: CheckpointId, isFinal: boolean): Ending {
  return isFinal ? { phase: 'finished', checkpointId } : e;
}
