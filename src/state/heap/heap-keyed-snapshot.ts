/**
 * One heap keyed snapshot between its sync part (the captured, pinned group maps) and the end of
 * its async part, which encodes them into one stream, writes it, and releases the captures.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { WeirError } from '../../core/errors.ts';
import type { KeyGroupsStateHandle } from '../../storage/handles.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { SnapshotRunner } from '../backend.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import { encodeKeyedStream, type CapturedTable } from './keyed-stream.ts';

export interface KeyedSnapshotTarget {
  readonly uid: string;
  readonly subtask: number;
  readonly range: KeyGroupRange;
  readonly streams: CheckpointStreamFactory;
}

/** The runner `HeapKeyedStateBackend.snapshot` returns; holds its captures until run, abort or subsumption. */
export class HeapKeyedSnapshot implements SnapshotRunner<KeyGroupsStateHandle[]> {
  readonly syncInfo: { readonly stateBytesEstimate: number };
  private started = false;
  private released = false;

  constructor(
    readonly checkpointId: CheckpointId,
    private captured: readonly CapturedTable[],
    private readonly target: KeyedSnapshotTarget,
    stateBytesEstimate: number,
    private readonly onRelease: (snapshot: HeapKeyedSnapshot) => void,
  ) {
    this.syncInfo = { stateBytesEstimate };
  }

  async run(): Promise<KeyGroupsStateHandle[]> {
    assert(!this.started, () => `keyed snapshot for checkpoint ${this.checkpointId} run twice`);
    this.started = true;
    const { uid, subtask, range, streams } = this.target;
    if (this.released) {
      throw new WeirError('CHECKPOINT_FAILED', `keyed snapshot of ${uid} subtask ${subtask} for checkpoint ${this.checkpointId} was aborted or disposed before its async part ran`);
    }
    let encoded;
    try {
      encoded = encodeKeyedStream(this.captured, range.start);
    } finally {
      this.release();
    }
    if (encoded === null) return [];
    const stream = await streams.write('exclusive', `keyed-${uid}-${subtask}`, encoded.bytes);
    return [{ type: 'key-groups', range: { start: range.start, end: range.end }, offsets: encoded.offsets, stream, keyCounts: encoded.keyCounts }];
  }

  /** Unpins the captured maps; afterwards the snapshot can no longer run. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const { table, groups } of this.captured) table.release(groups);
    this.captured = [];
    this.onRelease(this);
  }
}
