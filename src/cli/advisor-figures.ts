/** Writes a finished run's checkpoint figures into its retained job directory, for `weir advise <job dir>` (`weir run`, `weir demo`). */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { backpressureOfRun, writeFiguresFile } from '../advisor/figures-file.ts';
import { systemClock } from '../core/adapters.ts';
import type { JobResult, StreamEnvironment } from '../index.ts';
import type { JobMaster } from '../internal.ts';

/** Keeps the run's checkpoint figures in its retained job directory for `weir advise <job dir>`; `master` (when in this process) adds the last restore and backpressure. */
export function keepAdvisorFigures(env: StreamEnvironment, result: JobResult, master: JobMaster | null): void {
  const root = env.options.checkpointStorage;
  const jobDir = path.join(root, result.jobId);
  if (!path.isAbsolute(root) || !existsSync(jobDir)) return;
  const c = env.options.checkpointing;
  const incremental = env.options.stateBackend.type === 'embedded' ? env.options.stateBackend.incremental : false;
  writeFiguresFile(
    jobDir,
    result.jobId,
    { intervalMs: c.intervalMs, timeoutMs: c.timeoutMs, unaligned: c.unaligned, alignedTimeoutMs: c.alignedCheckpointTimeoutMs, incremental },
    result.restarts,
    {
      lastRestoreMs: master?.latestRestore?.durationMs ?? null,
      backpressureRatio:
        master === null
          ? null
          : backpressureOfRun(
              master.tasks.map((t) => t.backpressuredMs),
              runningMs(master),
            ),
    },
    result.checkpoints,
  );
}

/** How long the last attempt ran, up to the job's end (or now). */
function runningMs(master: JobMaster): number | null {
  const since = master.runningSinceMs;
  return since === null ? null : (master.endedAtMs ?? systemClock.wallNow()) - since;
}
