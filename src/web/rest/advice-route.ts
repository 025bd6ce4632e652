/**
 * `GET /jobs/:id/advice` (Weir's own route): the checkpoint advisor over the job's REST answers —
 * the checkpoint history (the newest 100), its options and backpressure. `figuresFromRest` is pure,
 * so `weir advise <job id>` reduces the same answers fetched over HTTP.
 */
import { phasesOfStats } from '../../advisor/figures-file.ts';
import { type CheckpointFigure, type JobFigures, NO_PHASES } from '../../advisor/figures.ts';
import { type Advice, advise } from '../../advisor/rules.ts';
import type { WebJob } from '../web-job.ts';
import { backpressure } from './backpressure-route.ts';
import { checkpointConfig, checkpointsOverview } from './checkpoint-routes.ts';
import type { Backpressure, CheckpointConfig, CheckpointEntry, CheckpointsOverview } from './responses.ts';

/** The advice for a job served here: its REST answers, with each checkpoint's sync, async and alignment times from its stats. */
export function jobAdvice(job: WebJob, jobId: string): Advice {
  const figures = figuresFromRest(`job ${jobId}`, checkpointsOverview(job), checkpointConfig(job), backpressure(job));
  const phases = new Map(job.master.checkpointCoordinator.history.map((s) => [s.checkpointId as number, phasesOfStats(s)]));
  return advise({ ...figures, checkpoints: figures.checkpoints.map((c) => ({ ...c, ...phases.get(c.checkpointId) })) });
}

/** Reduces the REST answers about one job to figures; in-progress checkpoints and savepoints are left out. */
export function figuresFromRest(source: string, overview: CheckpointsOverview, config: CheckpointConfig, bp: Backpressure | null): JobFigures {
  const ended = overview.history.filter((e) => e.status !== 'IN_PROGRESS' && !e.is_savepoint).reverse();
  const maxRatio = bp === null || bp.status !== 'ok' ? null : Math.max(0, ...bp.vertices.map((v) => v.maxBackPressuredRatio));
  return {
    source,
    checkpointing: {
      intervalMs: config.interval > 0 ? config.interval : null,
      timeoutMs: config.timeout > 0 ? config.timeout : null,
      unaligned: config.unaligned_checkpoints,
      alignedTimeoutMs: config.aligned_checkpoint_timeout,
      incremental: null,
    },
    checkpoints: ended.map(figureOf),
    backpressureRatio: maxRatio,
    restarts: overview.counts.restored,
    lastRestoreMs: overview.latest.restored?.restore_duration ?? null,
  };
}

function figureOf(e: CheckpointEntry): CheckpointFigure {
  const status = e.status === 'COMPLETED' ? 'completed' : e.failure_reason === 'EXPIRED' ? 'timed-out' : 'failed';
  return {
    checkpointId: e.id,
    status,
    timestampMs: e.trigger_timestamp,
    durationMs: e.end_to_end_duration,
    stateBytes: e.status === 'COMPLETED' ? e.state_size : null,
    inflightBytes: e.persisted_data,
    type: e.checkpoint_type === 'UNALIGNED_CHECKPOINT' ? 'unaligned' : 'aligned',
    ...NO_PHASES,
  };
}
