/**
 * One embedded keyed snapshot between its sync part and the end of its async part. The sync part
 * (in the backend) pinned the cache maps; with the store as it was then they are the state of that
 * moment. The async part writes one file, key group by key group:
 *
 *   full   every entry, v1 layout, exclusive to the checkpoint (incremental off, and savepoints)
 *   base   every entry, v1 layout, in shared/: a new incremental chain
 *   delta  the keys changed since the chain's checkpoint (values, or deletions), v2 layout, in shared/
 *
 * The async part reads the store as it is now, never through a read transaction held across its
 * pauses (that grew lmdb's map file by a copy of the tree per eviction: BENCHMARKS.md, state (g)).
 * Instead, before the backend's eviction overwrites or deletes a key the snapshot may still read, it
 * preserves the key's value at the sync part (`preserve`), and the snapshot reads that pre-image in
 * place of the store's. Full and base plans read the store in key order, one chunk of
 * `entriesPerStep` entries at a time, so only keys past the last chunk read need pre-images; a
 * delta needs them for its changed keys.
 */
import { assert } from '../../core/assert.ts';
import { WeirError } from '../../core/errors.ts';
import type { CheckpointId } from '../../core/ids.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { streamSize } from '../../storage/handles.ts';
import { sharedStateFileHint } from '../../storage/paths.ts';
import { writeStreamParts, type CheckpointStreamFactory } from '../../storage/storage.ts';
import type { Pause, SnapshotRunner } from '../backend.ts';
import type { IncrementalStateFile } from '../handles/incremental.ts';
import type { KeyedStateHandle } from '../handles/registry.ts';
import { encodeValue } from '../codec.ts';
import type { StateKind } from '../descriptors.ts';
import type { Key, KeyGroupRange } from '../key-groups.ts';
import type { CompletedChain } from '../incremental/chain.ts';
import { changeSlot, slotGroupIndex, type ChangeSet } from '../incremental/change-tracker.ts';
import { KeyedStreamBuilder, PackedEntries, type RawStateSection, type SectionLayout } from '../formats/keyed-sections.ts';
import type { LocalStore } from './local-store.ts';
import { ABSENT, type Slot, type SlotMap, type SlotTable } from './slot-table.ts';
import { encodeUserKey, STORE_KEY_PREFIX_BYTES, storeKeyOf, storeKeyPrefix } from './store-keys.ts';

export type SnapshotPlan = 'full' | 'base' | 'delta';

export interface CapturedTable {
  readonly table: SlotTable;
  readonly groups: ReadonlyArray<SlotMap | undefined>;
}

export interface EmbeddedSnapshotArgs {
  readonly checkpointId: CheckpointId;
  readonly plan: SnapshotPlan;
  readonly uid: string;
  readonly subtask: number;
  readonly range: KeyGroupRange;
  readonly streams: CheckpointStreamFactory;
  readonly store: LocalStore;
  /** Ascending by state id. */
  readonly captured: readonly CapturedTable[];
  /** Delta plan: every change since `parent`. */
  readonly changes: readonly ChangeSet[];
  /** Delta plan: the chain it extends. */
  readonly parent: CompletedChain | null;
  /** The newest completed checkpoint the backend knew of at the sync part. */
  readonly knownCompleted: number | null;
  /** Keys per state at the sync part. */
  readonly keyCounts: Readonly<Record<string, number>>;
  /** Whether the snapshot is a savepoint (never extended by later checkpoints). */
  readonly savepoint: boolean;
  /** Entries the async part reads and encodes between two pauses. */
  readonly entriesPerStep: number;
}

export function storedBytes(kind: StateKind, value: unknown): Uint8Array {
  return encodeValue(kind === 'map' ? Array.from(value as Map<unknown, unknown>) : value);
}

/** The runner the embedded backend's `snapshot` returns. */
export class EmbeddedKeyedSnapshot implements SnapshotRunner<KeyedStateHandle[]> {
  readonly syncInfo: { readonly stateBytesEstimate: number };
  /** After `run`, for base and delta plans: the chain this snapshot's handle describes. */
  chain: CompletedChain | null = null;
  private started = false;
  private released = false;
  /**
   * Per change slot (state and key group), by store key (latin1): the values the store held at the
   * sync part for keys it has overwritten or deleted since, which the snapshot had yet to read, as
   * latin1 strings (compact: a 1M-key bench kept ~100k at once); null: absent at the sync part.
   */
  private readonly preImages = new Map<number, Map<string, string | null>>();
  /** Full and base plans: every store key up to this one (inclusive) has been read; null before the first. */
  private readThrough: Buffer | null = null;
  /** Set once the async part has read all it needs from the store. */
  private readDone = false;

  constructor(
    readonly args: EmbeddedSnapshotArgs,
    stateBytesEstimate: number,
    private readonly onRelease: (s: EmbeddedKeyedSnapshot) => void,
  ) {
    this.syncInfo = { stateBytesEstimate };
  }

  get checkpointId(): CheckpointId {
    return this.args.checkpointId;
  }

  /** Whether `preserve` has anything to do for this snapshot. */
  get needsPreImages(): boolean {
    return !this.released && !this.readDone;
  }

  /** Pre-images kept now (for tests and figures). */
  get preImageCount(): number {
    let n = 0;
    for (const m of this.preImages.values()) n += m.size;
    return n;
  }

  /**
   * Called before the store overwrites or deletes `storeKey` (state `stateId`, group `groupIndex`):
   * keeps the value this snapshot must still read.
   */
  preserve(stateId: number, groupIndex: number, key: Key, storeKey: Buffer): void {
    if (!this.needsPreImages) return;
    const slot = changeSlot(stateId, groupIndex);
    if (this.args.plan === 'delta') {
      if (!this.args.changes.some((c) => c.get(slot)?.has(key) === true)) return;
    } else if (this.readThrough !== null && Buffer.compare(storeKey, this.readThrough) <= 0) {
      return; // already read
    }
    const captured = this.args.captured.find((c) => c.table.stateId === stateId);
    if (captured === undefined) return; // a state registered after the sync part: not in this snapshot
    if (captured.groups[groupIndex]?.has(key) === true) return; // the pinned cache map has it
    let preserved = this.preImages.get(slot);
    if (preserved === undefined) this.preImages.set(slot, (preserved = new Map()));
    const id = storeKey.toString('latin1');
    if (!preserved.has(id)) preserved.set(id, this.args.store.getLatin1(storeKey) ?? null);
  }

  async run(pause?: Pause): Promise<KeyedStateHandle[]> {
    assert(!this.started, () => `keyed snapshot for checkpoint ${this.checkpointId} run twice`);
    this.started = true;
    this.checkLive('before its async part ran');
    const step = new Steps(this.args.entriesPerStep, pause, () => this.checkLive('during its async part'));
    let builder: KeyedStreamBuilder;
    try {
      builder = this.args.plan === 'delta' ? await this.encodeDelta(step) : await this.encodeAll(step);
      this.readDone = true;
      this.preImages.clear();
    } finally {
      this.release();
    }
    const plan = this.args.plan;
    if (plan === 'full') return this.fullHandle(builder);
    return [await this.incrementalHandle(builder)];
  }

  /** An aborted or disposed snapshot (its captures released) cannot go on. */
  private checkLive(when: string): void {
    if (!this.released) return;
    const { uid, subtask } = this.args;
    throw new WeirError('CHECKPOINT_FAILED', `keyed snapshot of ${uid} subtask ${subtask} for checkpoint ${this.checkpointId} was aborted or disposed ${when}`);
  }

  private async write(
    builder: KeyedStreamBuilder,
    layout: SectionLayout,
  ): Promise<{ stream: StreamStateHandle; offsets: Array<readonly [number, number, number]> }> {
    // In parts: joining hundreds of MB (and checksumming them) in one go would hold the task's thread.
    const { parts, offsets } = builder.finishParts();
    const { uid, subtask, plan, streams } = this.args;
    const stream =
      plan === 'full'
        ? await writeStreamParts(streams, 'exclusive', `keyed-${uid}-${subtask}`, parts)
        : await writeStreamParts(streams, 'shared', sharedStateFileHint(this.checkpointId, `${layout === 'full' ? 'base' : 'delta'}-${uid}-${subtask}`), parts);
    return { stream, offsets };
  }

  private async fullHandle(builder: KeyedStreamBuilder): Promise<KeyedStateHandle[]> {
    if (builder.isEmpty) return [];
    const { stream, offsets } = await this.write(builder, 'full');
    const range = { start: this.args.range.start, end: this.args.range.end };
    return [{ type: 'key-groups', range, offsets, stream, keyCounts: builder.keyCounts }];
  }

  private async incrementalHandle(builder: KeyedStreamBuilder): Promise<KeyedStateHandle> {
    const { plan, parent, knownCompleted, keyCounts, range } = this.args;
    const kind = plan === 'base' ? 'base' : 'delta';
    const files: IncrementalStateFile[] = plan === 'delta' ? [...parent!.files] : [];
    let baseBytes = plan === 'delta' ? parent!.baseBytes : 0;
    let deltaBytes = plan === 'delta' ? parent!.deltaBytes : 0;
    if (!builder.isEmpty) {
      const { stream, offsets } = await this.write(builder, kind === 'base' ? 'full' : 'delta');
      files.push({ kind, checkpointId: this.checkpointId, offsets, stream });
      if (kind === 'base') baseBytes = streamSize(stream);
      else deltaBytes += streamSize(stream);
    }
    let keys = 0;
    for (const n of Object.values(keyCounts)) keys += n;
    this.chain = { checkpointId: this.checkpointId, files, baseBytes, deltaBytes, keys };
    return {
      type: 'incremental-key-groups',
      range: { start: range.start, end: range.end },
      checkpointId: this.checkpointId,
      knownCompletedCheckpointId: knownCompleted,
      files,
      keyCounts: { ...keyCounts },
    };
  }

  /** Every entry of the store as of the sync part merged with the pinned cache maps (cache entries win). */
  private async encodeAll(step: Steps): Promise<KeyedStreamBuilder> {
    const { range, captured } = this.args;
    const builder = new KeyedStreamBuilder('full');
    // One buffer per state, reused by every key group: a section is copied out when it is encoded.
    const packed = captured.map(() => new PackedEntries());
    for (let kg = range.start; kg <= range.end; kg++) {
      const index = kg - range.start;
      const states: RawStateSection[] = [];
      for (let i = 0; i < captured.length; i++) {
        const { table, groups } = captured[i]!;
        const entries = packed[i]!;
        entries.clear();
        await this.readSection(kg, index, new SectionMerge(table, groups[index], entries), step);
        if (entries.length > 0) states.push({ name: table.name, kind: table.kind, entries, removed: [] });
      }
      builder.add(kg, states);
    }
    return builder;
  }

  /**
   * The entries of one state in one key group as of the sync part, into `merge`: the store's, read
   * in chunks, each key's pre-image in place of the store's value where one was kept; then the
   * pinned cache map's entries the store did not have.
   */
  private async readSection(kg: number, index: number, merge: SectionMerge, step: Steps): Promise<void> {
    const { store, entriesPerStep } = this.args;
    const stateId = merge.table.stateId;
    const start = storeKeyPrefix(kg, stateId);
    const end = storeKeyPrefix(kg, stateId + 1);
    const slot = changeSlot(stateId, index);
    // Store keys are longer than their 4-byte prefix: every key of this section is past `start`.
    this.readThrough = start;
    for (let after: Buffer | null = null; ; ) {
      // Pre-images of this chunk's keys were all kept before it is read: none are added during it.
      const preserved = this.preImages.get(slot);
      let read = 0;
      const last = store.scanChunk(start, end, entriesPerStep, after, (key, value, length) => {
        read++;
        if (preserved !== undefined && preserved.size > 0) {
          const id = key.toString('latin1');
          const before = preserved.get(id);
          if (before !== undefined) {
            preserved.delete(id);
            if (before !== null) {
              const bytes = Buffer.from(before, 'latin1');
              merge.stored(key, bytes, bytes.byteLength);
            }
            return;
          }
        }
        merge.stored(key, value, length);
      });
      if (last !== null) this.readThrough = after = last;
      // Pause between chunks only: a chunk's entries die young, before the task runs again.
      if (step.due(read)) await step.pause();
      if (read < entriesPerStep) break;
    }
    // Every key of this section is read; what is left preserved are keys deleted from the store since.
    this.readThrough = end;
    const left = this.preImages.get(slot);
    if (left !== undefined) {
      this.preImages.delete(slot);
      for (const [id, before] of left) if (before !== null) merge.storedOutOfOrder(Buffer.from(id, 'latin1'), Buffer.from(before, 'latin1'));
    }
    await merge.finish(step);
  }

  /** Each changed key's value as of the sync part, or its deletion. */
  private async encodeDelta(step: Steps): Promise<KeyedStreamBuilder> {
    const { range, captured, changes, store } = this.args;
    // The changed slots' group indexes; their keys are read slot by slot below, between pauses (a
    // union of every changed key up front held the thread ~0.1 s for 600 k keys).
    const indexes = new Set<number>();
    for (const set of changes) for (const slot of set.keys()) indexes.add(slotGroupIndex(slot));
    const builder = new KeyedStreamBuilder('delta');
    for (const index of [...indexes].sort((a, b) => a - b)) {
      const kg = range.start + index;
      const states: RawStateSection[] = [];
      for (const { table, groups } of captured) {
        const keys = await changedKeys(changes, changeSlot(table.stateId, index), step);
        if (keys === null) continue;
        const section = { name: table.name, kind: table.kind, entries: [] as Array<readonly [Uint8Array, Uint8Array]>, removed: [] as Uint8Array[] };
        const pinned = groups[index];
        for (const key of keys) {
          const userKey = encodeUserKey(key);
          const slot = pinned?.get(key);
          let bytes: Uint8Array | null | undefined;
          if (slot !== undefined) {
            bytes = slot.value === ABSENT ? null : storedBytes(table.kind, slot.value);
          } else {
            const storeKey = storeKeyOf(kg, table.stateId, userKey, table.name);
            const preserved = this.preImages.get(changeSlot(table.stateId, index))?.get(storeKey.toString('latin1'));
            bytes = preserved === undefined ? (store.get(storeKey) ?? null) : preserved === null ? null : Buffer.from(preserved, 'latin1');
          }
          if (bytes === null) section.removed.push(userKey);
          else section.entries.push([userKey, bytes]);
          if (step.due()) await step.pause();
        }
        if (section.entries.length + section.removed.length > 0) states.push(section);
      }
      builder.add(kg, states);
    }
    return builder;
  }

  /** Unpins the captures; afterwards the snapshot can no longer run. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const { table, groups } of this.args.captured) table.release(groups);
    this.preImages.clear();
    this.onRelease(this);
  }
}

/**
 * Merges one section's store entries (as of the sync part, in key order) with its pinned cache map,
 * whose entries win. The pinned keys are encoded and sorted once, and merged with the store's by
 * their bytes, which is the store's order within a section: decoding every store key to look it up
 * in the map took ~40% of a 1 M-key full snapshot's CPU (2026-12-05 profile).
 */
class SectionMerge {
  /** The pinned map's entries with their keys encoded, ascending by those bytes. */
  private readonly pinned: Array<readonly [Buffer, Slot]> = [];
  /** The first pinned entry not yet written. */
  private next = 0;

  constructor(
    readonly table: SlotTable,
    pinned: SlotMap | undefined,
    private readonly out: PackedEntries,
  ) {
    if (pinned === undefined || pinned.size === 0) return;
    for (const [key, slot] of pinned) {
      const bytes = encodeUserKey(key);
      this.pinned.push([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), slot]);
    }
    this.pinned.sort((a, b) => Buffer.compare(a[0], b[0]));
  }

  /** One stored entry (store key, value bytes), after every entry of a smaller key. */
  stored(storeKey: Uint8Array, value: Uint8Array, valueLength: number): void {
    const pinned = this.pinned;
    while (this.next < pinned.length) {
      // > 0: the pinned key comes after the store's; 0: the same key, and the cache's value wins.
      const order = pinned[this.next]![0].compare(storeKey, STORE_KEY_PREFIX_BYTES);
      if (order > 0) break;
      this.writePinned(this.next++);
      if (order === 0) return;
    }
    this.out.addFrom(storeKey, STORE_KEY_PREFIX_BYTES, value, valueLength);
  }

  /**
   * A stored entry out of key order: the pre-image of a key deleted from the store since the sync
   * part. `preserve` keeps none for a pinned key, so it is never one of them.
   */
  storedOutOfOrder(storeKey: Uint8Array, value: Uint8Array): void {
    this.out.addFrom(storeKey, STORE_KEY_PREFIX_BYTES, value, value.byteLength);
  }

  /** Adds the pinned entries after the store's last key. */
  async finish(step: Steps): Promise<void> {
    while (this.next < this.pinned.length) {
      this.writePinned(this.next++);
      if (step.due()) await step.pause();
    }
  }

  private writePinned(i: number): void {
    const [key, slot] = this.pinned[i]!;
    if (slot.value !== ABSENT) this.out.add(key, storedBytes(this.table.kind, slot.value));
  }
}

/**
 * Bounds the async part's synchronous stretches: every `entriesPerStep` entries (default 1024, a
 * few ms of reading and encoding at 2-4 µs an entry, more under load) it awaits `pause` so the
 * task's mailbox runs, then checks the snapshot is still live (an abort or dispose releases
 * its captures meanwhile). `due()` is called per entry, so it never allocates.
 */
class Steps {
  private entries = 0;

  constructor(
    private readonly entriesPerStep: number,
    private readonly yieldToTask: Pause | undefined,
    private readonly checkLive: () => void,
  ) {}

  /** Counts `n` entries (default one); true when a step's worth was done and the caller should `await pause()`. */
  due(n = 1): boolean {
    this.entries += n;
    if (this.entries < this.entriesPerStep || this.yieldToTask === undefined) return false;
    this.entries = 0;
    return true;
  }

  async pause(): Promise<void> {
    await this.yieldToTask!();
    this.checkLive();
  }
}

/**
 * The keys of one slot changed in any of the epochs, each once: the one epoch's set as it is, or a
 * union built with the snapshot's pauses. Null when no epoch changed the slot.
 */
async function changedKeys(changes: readonly ChangeSet[], slot: number, step: Steps): Promise<ReadonlySet<Key> | null> {
  let only: ReadonlySet<Key> | null = null;
  let union: Set<Key> | null = null;
  for (const set of changes) {
    const keys = set.get(slot);
    if (keys === undefined) continue;
    if (only === null) {
      only = keys;
      continue;
    }
    if (union === null) union = new Set(only);
    for (const k of keys) {
      union.add(k);
      if (step.due()) await step.pause();
    }
  }
  return union ?? only;
}
