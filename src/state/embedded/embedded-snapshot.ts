/**
 * One embedded keyed snapshot between its sync part and the end of its async part. The sync part
 * (in the backend) pinned the cache maps and, for a full file, opened a store cursor; together they
 * are the state of that moment. The async part writes one file, key group by key group:
 *
 *   full   every entry, v1 layout, exclusive to the checkpoint (incremental off, and savepoints)
 *   base   every entry, v1 layout, in shared/: a new incremental chain
 *   delta  the keys changed since the chain's checkpoint (values, or deletions), v2 layout, in shared/
 *
 * A delta reads changed keys one by one from the store as it is now; a key the store overwrites
 * before the delta read it is preserved first (`preserve`), so writes made after the sync part
 * never leak into the snapshot.
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
import { changeSlot, slotGroupIndex, slotStateId, type ChangeSet } from '../incremental/change-tracker.ts';
import { KeyedStreamBuilder, type RawStateSection, type SectionLayout } from '../formats/keyed-sections.ts';
import type { LocalStore, StoreCursor } from './local-store.ts';
import { ABSENT, type SlotMap, type SlotTable } from './slot-table.ts';
import { decodeUserKey, encodeUserKey, keyGroupOfStoreKey, stateIdOfStoreKey, storeKeyOf, userKeyBytes } from './store-keys.ts';

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
  /** Full and base plans: the store as of the sync part. */
  readonly cursor: StoreCursor | null;
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
  /** Values the store held at the sync part for changed keys it has overwritten since (null: absent). */
  private readonly preImages = new Map<string, Uint8Array | null>();

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
    return this.args.plan === 'delta' && !this.released;
  }

  /**
   * Called before the store overwrites `storeKey` (state `stateId`, group `groupIndex`): keeps the
   * value this snapshot must still read.
   */
  preserve(stateId: number, groupIndex: number, key: Key, storeKey: Buffer): void {
    if (!this.needsPreImages) return;
    const slot = changeSlot(stateId, groupIndex);
    if (!this.args.changes.some((c) => c.get(slot)?.has(key) === true)) return;
    const captured = this.args.captured.find((c) => c.table.stateId === stateId);
    if (captured?.groups[groupIndex]?.has(key) === true) return; // the pinned cache map has it
    const id = storeKey.toString('latin1');
    if (!this.preImages.has(id)) this.preImages.set(id, this.args.store.get(storeKey) ?? null);
  }

  async run(pause?: Pause): Promise<KeyedStateHandle[]> {
    assert(!this.started, () => `keyed snapshot for checkpoint ${this.checkpointId} run twice`);
    this.started = true;
    this.checkLive('before its async part ran');
    const step = new Steps(this.args.entriesPerStep, pause, () => this.checkLive('during its async part'));
    let builder: KeyedStreamBuilder;
    try {
      builder = this.args.plan === 'delta' ? await this.encodeDelta(step) : await this.encodeAll(step);
    } finally {
      this.release();
    }
    const plan = this.args.plan;
    if (plan === 'full') return this.fullHandle(builder);
    return [await this.incrementalHandle(builder)];
  }

  /** An aborted or disposed snapshot (its cursor and captures released) cannot go on. */
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

  /** Every entry of the store's view merged with the pinned cache maps (cache entries win). */
  private async encodeAll(step: Steps): Promise<KeyedStreamBuilder> {
    const { range, captured } = this.args;
    const cursor = this.args.cursor!;
    const builder = new KeyedStreamBuilder('full');
    for (let kg = range.start; kg <= range.end; kg++) {
      const index = kg - range.start;
      const states: RawStateSection[] = [];
      for (const { table, groups } of captured) {
        skipBefore(cursor, kg, table.stateId);
        const entries = await mergedEntries(cursor, kg, table, groups[index], step);
        if (entries.length > 0) states.push({ name: table.name, kind: table.kind, entries, removed: [] });
      }
      builder.add(kg, states);
    }
    cursor.close();
    return builder;
  }

  /** Each changed key's value as of the sync part, or its deletion. */
  private async encodeDelta(step: Steps): Promise<KeyedStreamBuilder> {
    const { range, captured, changes, store } = this.args;
    const byGroup = new Map<number, Map<number, Set<Key>>>(); // group index -> state id -> keys
    for (const set of changes) {
      for (const [slot, keys] of set) {
        const index = slotGroupIndex(slot);
        let states = byGroup.get(index);
        if (states === undefined) byGroup.set(index, (states = new Map()));
        let union = states.get(slotStateId(slot));
        if (union === undefined) states.set(slotStateId(slot), (union = new Set()));
        for (const k of keys) union.add(k);
      }
    }
    const builder = new KeyedStreamBuilder('delta');
    for (const index of [...byGroup.keys()].sort((a, b) => a - b)) {
      const kg = range.start + index;
      const states: RawStateSection[] = [];
      for (const { table, groups } of captured) {
        const keys = byGroup.get(index)!.get(table.stateId);
        if (keys === undefined) continue;
        const section: RawStateSection = { name: table.name, kind: table.kind, entries: [], removed: [] };
        const pinned = groups[index];
        for (const key of keys) {
          const userKey = encodeUserKey(key);
          const slot = pinned?.get(key);
          let bytes: Uint8Array | null | undefined;
          if (slot !== undefined) {
            bytes = slot.value === ABSENT ? null : storedBytes(table.kind, slot.value);
          } else {
            const storeKey = storeKeyOf(kg, table.stateId, userKey, table.name);
            const preserved = this.preImages.get(storeKey.toString('latin1'));
            bytes = preserved !== undefined ? preserved : (store.get(storeKey) ?? null);
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

  /** Unpins the captures and closes the cursor; afterwards the snapshot can no longer run. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.args.cursor?.close();
    for (const { table, groups } of this.args.captured) table.release(groups);
    this.preImages.clear();
    this.onRelease(this);
  }
}

/** Moves the cursor past entries of earlier key groups or states (there are none unless a state was dropped). */
function skipBefore(cursor: StoreCursor, kg: number, stateId: number): void {
  for (let e = cursor.peek(); e !== null; e = cursor.peek()) {
    const ekg = keyGroupOfStoreKey(e.key);
    if (ekg > kg || (ekg === kg && stateIdOfStoreKey(e.key) >= stateId)) return;
    cursor.advance();
  }
}

/** The entries of one state in one key group: the store's, overridden and completed by the pinned cache map. */
async function mergedEntries(
  cursor: StoreCursor,
  kg: number,
  table: SlotTable,
  pinned: SlotMap | undefined,
  step: Steps,
): Promise<Array<readonly [Uint8Array, Uint8Array]>> {
  const entries: Array<readonly [Uint8Array, Uint8Array]> = [];
  const seen = pinned !== undefined && pinned.size > 0 ? new Set<Key>() : null;
  for (let e = cursor.peek(); e !== null && keyGroupOfStoreKey(e.key) === kg && stateIdOfStoreKey(e.key) === table.stateId; e = cursor.peek()) {
    if (seen !== null) {
      const key = decodeUserKey(e.key);
      const slot = pinned!.get(key);
      if (slot === undefined) entries.push([userKeyBytes(e.key), e.value]);
      else {
        seen.add(key);
        if (slot.value !== ABSENT) entries.push([userKeyBytes(e.key), storedBytes(table.kind, slot.value)]);
      }
    } else {
      entries.push([userKeyBytes(e.key), e.value]);
    }
    cursor.advance();
    if (step.due()) await step.pause();
  }
  if (pinned !== undefined) {
    for (const [key, slot] of pinned) {
      if (slot.value === ABSENT || seen?.has(key) === true) continue;
      entries.push([encodeUserKey(key), storedBytes(table.kind, slot.value)]);
      if (step.due()) await step.pause();
    }
  }
  return entries;
}

/**
 * Bounds the async part's synchronous stretches: every `entriesPerStep` entries (default 1024, a
 * few ms of reading and encoding at 2-4 µs an entry, more under load) it awaits `pause` so the
 * task's mailbox runs, then checks the snapshot is still live (an abort or dispose releases
 * its cursor meanwhile). `due()` is called per entry, so it never allocates.
 */
class Steps {
  private entries = 0;

  constructor(
    private readonly entriesPerStep: number,
    private readonly yieldToTask: Pause | undefined,
    private readonly checkLive: () => void,
  ) {}

  /** Counts one entry; true when a step's worth was done and the caller should `await pause()`. */
  due(): boolean {
    if (++this.entries < this.entriesPerStep || this.yieldToTask === undefined) return false;
    this.entries = 0;
    return true;
  }

  async pause(): Promise<void> {
    await this.yieldToTask!();
    this.checkLive();
  }
}
