/**
 * The figures file a job directory keeps after the job ended: `advisor-figures.json`, written by
 * `weir run` when the job finishes with a retained job directory, read by `weir advise <job dir>`.
 * Only `_metadata` survives otherwise, without durations or failures. Versioned: a reader refuses a
 * version it does not know rather than guess.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointStats } from '../checkpoint/coordinator/checkpoint-stats.ts';
import { WeirError } from '../core/errors.ts';
import type { CheckpointFigure, CheckpointingFigures, JobFigures } from './figures.ts';

/** The file's name inside a job directory. */
export const FIGURES_FILE = 'advisor-figures.json';
/** The format version this code writes and reads. */
export const FIGURES_VERSION = 1;

interface FiguresFileV1 {
  readonly format: 'weir-advisor-figures';
  readonly version: 1;
  readonly jobId: string;
  readonly checkpointing: CheckpointingFigures;
  readonly restarts: number;
  readonly checkpoints: readonly CheckpointFigure[];
}

/** One checkpoint's figures from the coordinator's stats. */
export function figureOfStats(s: CheckpointStats): CheckpointFigure {
  const sum = (f: (m: CheckpointStats['subtasks'][number]['metrics']) => number): number => s.subtasks.reduce((a, t) => a + f(t.metrics), 0);
  return {
    checkpointId: s.checkpointId,
    status: s.status === 'COMPLETED' ? 'completed' : s.failureReason === 'EXPIRED' ? 'timed-out' : 'failed',
    timestampMs: s.triggeredAtMs,
    durationMs: Math.round(s.durationMs),
    stateBytes: s.status === 'COMPLETED' ? sum((m) => m.stateBytes) : null,
    inflightBytes: sum((m) => m.channelStateBytes),
    type: s.subtasks.some((t) => t.metrics.unaligned) ? 'unaligned' : 'aligned',
  };
}

/** Writes the figures of a finished run into `jobDir`; savepoints and in-progress checkpoints are left out. */
export function writeFiguresFile(
  jobDir: string,
  jobId: string,
  checkpointing: CheckpointingFigures,
  restarts: number,
  stats: readonly CheckpointStats[],
): string {
  const file: FiguresFileV1 = {
    format: 'weir-advisor-figures',
    version: 1,
    jobId,
    checkpointing,
    restarts,
    checkpoints: stats.filter((s) => s.kind === 'checkpoint' && s.status !== 'IN_PROGRESS').map(figureOfStats),
  };
  const path = join(jobDir, FIGURES_FILE);
  writeFileSync(path, `${JSON.stringify(file, null, 1)}\n`);
  return path;
}

/** Reads `jobDir`'s figures file; null when there is none. */
export function readFiguresFile(jobDir: string): JobFigures | null {
  const path = join(jobDir, FIGURES_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<FiguresFileV1>;
  if (parsed.format !== 'weir-advisor-figures' || parsed.version !== FIGURES_VERSION)
    throw new WeirError(
      'UNSUPPORTED_VERSION',
      `${path}: not a figures file of version ${FIGURES_VERSION} (format ${parsed.format}, version ${parsed.version})`,
    );
  const f = parsed as FiguresFileV1;
  return { source: jobDir, checkpointing: f.checkpointing, checkpoints: f.checkpoints, backpressureRatio: null, restarts: f.restarts };
}
