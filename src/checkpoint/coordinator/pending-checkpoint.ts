/**
 * A checkpoint that was triggered and is collecting acknowledgements from every subtask.
 * `finalize` turns it into the metadata of a completed checkpoint; it decides nothing about I/O.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId, JobId } from '../../core/ids.ts';
import type { CheckpointOptions } from '../barrier/barrier.ts';
import type { CheckpointAck } from '../ack.ts';
import type { TaskId } from '../../core/ids.ts';
import type { CheckpointMetadata, OperatorStateMeta, SubtaskStateMeta } from '../metadata/metadata.ts';
import type { CheckpointStats } from './checkpoint-stats.ts';

export interface OperatorInfo {
  readonly uid: string;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
}

export type AckResult = 'accepted' | 'duplicate' | 'unexpected';

export const taskKey = (t: TaskId): string => `${t.vertex}/${t.subtask}`;

export class PendingCheckpoint {
  private readonly notYetAcked: Set<string>;
  private readonly acks: CheckpointAck[] = [];
  finalizing = false;

  constructor(
    readonly checkpointId: CheckpointId,
    readonly timestampMs: number,
    readonly startedAtMs: number,
    readonly options: CheckpointOptions,
    expected: readonly TaskId[],
    readonly stats: CheckpointStats,
  ) {
    this.notYetAcked = new Set(expected.map(taskKey));
  }

  acknowledge(ack: CheckpointAck): AckResult {
    assert(ack.checkpointId === this.checkpointId, 'ack for another checkpoint');
    const key = taskKey(ack.task);
    if (!this.notYetAcked.delete(key)) {
      return this.acks.some((a) => taskKey(a.task) === key) ? 'duplicate' : 'unexpected';
    }
    this.acks.push(ack);
    this.stats.subtasks.push({ task: ack.task, metrics: ack.metrics });
    this.stats.persistedBytes += ack.metrics.persistedBytes + ack.metrics.channelStateBytes;
    return 'accepted';
  }

  get isFullyAcknowledged(): boolean {
    return this.notYetAcked.size === 0;
  }

  get pendingTasks(): number {
    return this.notYetAcked.size;
  }

  /** The metadata of this checkpoint, every operator's subtasks in order. */
  finalize(jobId: JobId, operators: readonly OperatorInfo[]): CheckpointMetadata {
    assert(this.isFullyAcknowledged, () => `checkpoint ${this.checkpointId} finalized with ${this.notYetAcked.size} acks missing`);
    const byUid = new Map<string, SubtaskStateMeta[]>();
    for (const ack of this.acks) {
      for (const op of ack.operators) {
        let list = byUid.get(op.uid);
        if (!list) byUid.set(op.uid, (list = []));
        list.push({ subtask: ack.task.subtask, keyed: op.keyed, operator: op.operator, channels: op.channels });
      }
    }
    const metas: OperatorStateMeta[] = operators.map((info) => {
      const subtasks = (byUid.get(info.uid) ?? []).sort((a, b) => a.subtask - b.subtask);
      assert(subtasks.length === info.parallelism, () => `checkpoint ${this.checkpointId}: uid ${info.uid} has ${subtasks.length} of ${info.parallelism} subtask states`);
      return { uid: info.uid, name: info.name, parallelism: info.parallelism, maxParallelism: info.maxParallelism, subtasks };
    });
    let stateBytes = 0;
    let channelStateBytes = 0;
    let unaligned = false;
    for (const ack of this.acks) {
      stateBytes += ack.metrics.stateBytes;
      channelStateBytes += ack.metrics.channelStateBytes;
      unaligned ||= ack.metrics.unaligned;
    }
    const type = this.options.alignment === 'at-least-once' ? 'at-least-once' : unaligned ? 'unaligned' : 'aligned';
    const summary = { type, persistedBytes: this.stats.persistedBytes, stateBytes, channelStateBytes } as const;
    return { jobId, checkpointId: this.checkpointId, timestampMs: this.timestampMs, kind: this.options.kind, operators: metas, summary };
  }
}
