/** How the simulator reads job events: one line per event for traces, and which failures its faults explain. */
import type { JobEvent } from '../../cluster/job-master/job-events.ts';
import { InjectedFault, StorageError } from '../../core/errors.ts';

export function describeEvent(e: JobEvent): string {
  switch (e.type) {
    case 'checkpoint-completed':
    case 'checkpoint-failed':
      return `${e.type} ${e.stats.kind} ${e.stats.checkpointId}${e.stats.isFinal ? ' (final)' : ''}${e.stats.failureReason ? ` ${e.stats.failureReason}` : ''}`;
    case 'restarting':
      return `restarting attempt ${e.attempt}: ${e.cause}`;
    case 'running':
      return `running attempt ${e.attempt}${e.restoredFrom !== null ? ` from ${e.restoredFrom}` : ''}`;
    case 'failed':
      return `failed: ${e.error.message}`;
    case 'log':
      return `log: ${e.message}`;
    case 'restore-fallback':
      return `restore-fallback: ${e.reason}`;
    default:
      return e.type;
  }
}

/** Whether an injected fault (a thrown fault or a failed storage write) is in the error's cause chain, by class and code. */
export function isExpectedFailure(err: unknown): boolean {
  for (let e: unknown = err, i = 0; i < 10 && e !== undefined; i++) {
    if (e instanceof InjectedFault) return true;
    if (e instanceof StorageError && e.code === 'STORAGE_IO') return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}
