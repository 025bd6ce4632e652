/**
 * Figures from the snapshots retained on disk (a job directory or checkpoint root): only what the
 * `_metadata` files record — state and in-flight bytes, type, trigger time — so durations,
 * timeouts and backpressure are unknown and only completed checkpoints are counted.
 */
import { listCheckpointsIn } from '../checkpoint/restore/snapshot-listing.ts';
import { type JobFigures, NO_PHASES } from './figures.ts';

/** Reads the retained checkpoints under `dir` (already resolved) into figures. */
export async function figuresFromSnapshots(dir: string): Promise<JobFigures> {
  const listings = (await listCheckpointsIn(dir)).filter((l) => l.kind === 'checkpoint' && l.status === 'complete');
  listings.sort((a, b) => a.checkpointId - b.checkpointId);
  return {
    source: dir,
    checkpointing: { intervalMs: null, timeoutMs: null, unaligned: null, alignedTimeoutMs: null, incremental: null },
    checkpoints: listings.map((l) => ({
      checkpointId: l.checkpointId,
      status: 'completed',
      timestampMs: l.timestampMs,
      durationMs: null,
      stateBytes: l.summary?.stateBytes ?? null,
      inflightBytes: l.summary?.channelStateBytes ?? null,
      type: l.summary?.type ?? null,
      ...NO_PHASES,
    })),
    backpressureRatio: null,
    restarts: null,
    lastRestoreMs: null,
  };
}
