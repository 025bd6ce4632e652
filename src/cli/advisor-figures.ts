/** Writes a finished run's checkpoint figures into its retained job directory, for `weir advise <job dir>` (`weir run`, `weir demo`). */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { writeFiguresFile } from '../advisor/figures-file.ts';
import type { JobResult, StreamEnvironment } from '../index.ts';

/** Keeps the run's checkpoint figures in its retained job directory for `weir advise <job dir>`. */
export function keepAdvisorFigures(env: StreamEnvironment, result: JobResult, lastRestoreMs: number | null): void {
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
    lastRestoreMs,
    result.checkpoints,
  );
}
