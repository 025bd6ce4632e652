/**
 * One heap keyed snapshot between its sync part (the captured, pinned group maps) and the end of
 * its async part, which encodes them into one stream, writes it, and releases the captures.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { WeirError } from '../../core/errors.ts';
import type { KeyGroupsStateHandle } from '../handles/key-groups.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { SnapshotRunner } from '../backend.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import { encodeKeyedStream, type CapturedTable } from '../formats/keyed-stream.ts';
import { countKeys } from './state-table.ts';

export interface KeyedSnapshotTarget {
  readonly uid: string;
  readonly subtask: number;
  readonly range: KeyGroupRange;
  readonly streams: CheckpointStreamFactory;
}

/** The runner `HeapKeyedStateBackend.snapshot` returns; holds its captures until run, abort or subsumption. */
export class HeapKeyedSnapshot implements SnapshotRunner<KeyGroupsStateHandle[]> {
  private started = false;
  private released = false;

  constructor(
    readonly checkpointId: CheckpointId,
    private captured: readonly CapturedTable[],
    private readonly target: KeyedSnapshotTarget,
    private readonly bytesPerEntry: number,
    private readonly onRelease: (snapshot: HeapKeyedSnapshot) => void,
  ) {}

  /**
   * Counted when asked, not in the sync part: counting reads every captured map, and at a million
   * keys those reads miss the CPU cache often enough to be most of the pause.
   */
  get syncInfo(): { readonly stateBytesEstimate: number } {
    let entries = 0;
    for (const { groups } of this.captured) entries += countKeys(groups);
    return { stateBytesEstimate: entries * this.bytesPerEntry };
  }

  async run(): Promise<KeyGroupsStateHandle[]> {
    assert(!this.started, () => `keyed snapshot for checkpoint ${this.checkpointId} run twice`);
    this.started = true;
    const { uid, subtask, range, streams } = this.target;
    if (this.released) {
      throw new WeirError(
        'CHECKPOINT_FAILED',
        `keyed snapshot of ${uid} subtask ${subtask} for checkpoint ${this.checkpointId} was aborted or disposed before its async part ran`,
      );
    }
    let encoded: ReturnType<typeof encodeKeyedStream>;
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
