/**
 * Whether a snapshot holds open windows with pending timers: some operator's keyed state has window
 * contents (`window-contents`) and window timers (`_timers/window-timers`). The simulator counts the
 * savepoints it resumes from that do, so a rescale through a savepoint is known to carry open windows.
 */
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import { TIMER_STATE_PREFIX } from '../../runtime/time/keyed-timer-service.ts';
import { WINDOW_TIMERS } from '../../runtime/windows/window-operator.ts';
import type { StateReader } from '../../state/backend.ts';
import { HeapKeyedStateBackend } from '../../state/heap/heap-keyed-backend.ts';

/** Keys with open windows and keys with pending window timers, summed over the snapshot's operators. */
export async function openWindows(meta: CheckpointMetadata, read: StateReader): Promise<{ keysWithContents: number; keysWithTimers: number }> {
  let keysWithContents = 0;
  let keysWithTimers = 0;
  for (const op of meta.operators) {
    const handles = op.subtasks.flatMap((s) => s.keyed);
    if (handles.length === 0) continue;
    const backend = new HeapKeyedStateBackend({
      uid: op.uid,
      subtask: 0,
      keyGroupRange: { start: 0, end: op.maxParallelism - 1 },
      maxParallelism: op.maxParallelism,
    });
    await backend.restore(handles, read);
    const counts = backend.keyCounts();
    keysWithContents += counts['window-contents'] ?? 0;
    keysWithTimers += counts[TIMER_STATE_PREFIX + WINDOW_TIMERS] ?? 0;
  }
  return { keysWithContents, keysWithTimers };
}
