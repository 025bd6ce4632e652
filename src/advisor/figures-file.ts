/**
 * The figures file a job directory keeps after the job ended: `advisor-figures.json`, written by
 * `weir run` when the job finishes with a retained job directory, read by `weir advise <job dir>`.
 * Only `_metadata` survives otherwise, without durations or failures. Versioned: a reader refuses a
 * version it does not know rather than guess. Version 2 adds each checkpoint's sync, async and
 * alignment times, the aligned-checkpoint timeout, the last recovery's restore time and the last
 * attempt's backpressure; a version 1 file reads with those unknown.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckpointStats } from '../checkpoint/coordinator/checkpoint-stats.ts';
import { WeirError } from '../core/errors.ts';
import { type CheckpointFigure, type CheckpointingFigures, type JobFigures, NO_PHASES } from './figures.ts';

/** The file's name inside a job directory. */
export const FIGURES_FILE = 'advisor-figures.json';
/** The format version this code writes; it reads this one and every older one. */
export const FIGURES_VERSION = 2;

type V1Checkpoint = Omit<CheckpointFigure, keyof typeof NO_PHASES>;

interface FiguresFileV1 {
  readonly format: 'weir-advisor-figures';
  readonly version: 1;
  readonly jobId: string;
  readonly checkpointing: Omit<CheckpointingFigures, 'alignedTimeoutMs'>;
  readonly restarts: number;
  readonly checkpoints: readonly V1Checkpoint[];
}

interface FiguresFileV2 {
  readonly format: 'weir-advisor-figures';
  readonly version: 2;
  readonly jobId: string;
  readonly checkpointing: CheckpointingFigures;
  readonly restarts: number;
  readonly lastRestoreMs: number | null;
  /** The busiest subtask's share of the last attempt's running time spent backpressured. */
  readonly backpressureRatio: number | null;
  readonly checkpoints: readonly CheckpointFigure[];
}

/** The busiest subtask's share of `runningMs` spent backpressured (0..1); null when the attempt did not run. */
export function backpressureOfRun(backpressuredMs: readonly number[], runningMs: number | null): number | null {
  if (runningMs === null || runningMs <= 0 || backpressuredMs.length === 0) return null;
  return Math.min(1, Math.max(...backpressuredMs) / runningMs);
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
    ...phasesOfStats(s),
  };
}

/** A checkpoint's longest sync, async and alignment times over its subtasks (null before any acknowledged). */
export function phasesOfStats(s: CheckpointStats): Pick<CheckpointFigure, keyof typeof NO_PHASES> {
  if (s.subtasks.length === 0) return NO_PHASES;
  const max = (f: (m: CheckpointStats['subtasks'][number]['metrics']) => number): number => Math.round(Math.max(...s.subtasks.map((t) => f(t.metrics))));
  return { syncMs: max((m) => m.syncMs), asyncMs: max((m) => m.asyncMs), alignmentMs: max((m) => m.alignmentMs) };
}

/** Writes the figures of a finished run into `jobDir`; savepoints and in-progress checkpoints are left out. */
export function writeFiguresFile(
  jobDir: string,
  jobId: string,
  checkpointing: CheckpointingFigures,
  restarts: number,
  run: { readonly lastRestoreMs: number | null; readonly backpressureRatio: number | null },
  stats: readonly CheckpointStats[],
): string {
  const file: FiguresFileV2 = {
    format: 'weir-advisor-figures',
    version: 2,
    jobId,
    checkpointing,
    restarts,
    lastRestoreMs: run.lastRestoreMs,
    backpressureRatio: run.backpressureRatio,
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
  const parsed = JSON.parse(text) as Partial<FiguresFileV1 | FiguresFileV2>;
  if (parsed.format !== 'weir-advisor-figures' || (parsed.version !== 1 && parsed.version !== 2))
    throw new WeirError(
      'UNSUPPORTED_VERSION',
      `${path}: not a figures file of version 1 to ${FIGURES_VERSION} (format ${parsed.format}, version ${parsed.version})`,
    );
  const f = parsed.version === 1 ? fromV1(parsed as FiguresFileV1) : (parsed as FiguresFileV2);
  return {
    source: jobDir,
    checkpointing: f.checkpointing,
    checkpoints: f.checkpoints,
    backpressureRatio: f.backpressureRatio,
    restarts: f.restarts,
    lastRestoreMs: f.lastRestoreMs,
  };
}

/** A version 1 file as version 2: what it did not record is unknown. */
function fromV1(f: FiguresFileV1): FiguresFileV2 {
  return {
    ...f,
    version: 2,
    checkpointing: { ...f.checkpointing, alignedTimeoutMs: null },
    lastRestoreMs: null,
    backpressureRatio: null,
    checkpoints: f.checkpoints.map((c) => ({ ...c, ...NO_PHASES })),
  };
}
