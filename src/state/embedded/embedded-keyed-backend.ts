/**
 * The embedded keyed state backend: working state of one operator subtask in a local directory,
 * for state larger than memory, with a bounded JS cache in front and incremental checkpoints.
 *
 * Store: lmdb (local-store.ts): synchronous reads keep the state API synchronous and identical to
 * the heap backend's (figures: BENCHMARKS.md, state (f)). Keys are ordered key group first (see
 * store-keys.ts), so a key group is one contiguous range.
 *
 * Cache: per state and key group a map of slots (hot entries, and dirty ones the store has not
 * seen), at most `cacheEntriesMax` slots; past that a CLOCK sweep evicts cold slots and writes the
 * dirty ones to the store in one transaction. A miss reads the store once; absent keys are cached
 * too. Writes go to the store only on eviction, random lmdb puts being costly, so a state that fits
 * the cache runs at nearly heap speed and a checkpoint writes nothing to lmdb.
 *
 * Map and list state keep one store entry per key (the whole map or list): decoding a whole map
 * of up to ~100 entries costs about one or two store operations (BENCHMARKS.md, state (f)).
 *
 * Snapshots: the sync part is O(states x key groups), whatever the state size: it pins the cache
 * maps (copy-on-write) and closes the change epoch. It never writes to the store (flushing dirty
 * entries there would make the pause O(dirty entries)) and opens no store reader (a reader held
 * through the async part grows lmdb's map file). The async part (embedded-snapshot.ts) merges the
 * pinned maps with the store key group by key group into one file; evictions meanwhile first keep
 * the pre-images the snapshot has yet to read, so it sees the store as of the sync part.
 *
 * Incremental checkpoints (`incremental`, default): changed keys and deletions are tracked per
 * state and key group; each checkpoint writes only the changes since the last completed checkpoint
 * as a delta file in `shared/`, and its handle lists the chain (base, then deltas). Completing a
 * checkpoint makes its chain the one the next deltas extend; an aborted snapshot's changes stay in
 * the next delta. Once the deltas would pass `incrementsShareMax` times the base, a new base is
 * written and the chain restarts, which bounds what a restore reads.
 */
import { registeredState, type StateRegistry } from '../state-registry.ts';
import { tmpdir } from 'node:os';
import { AssertionError, assert, unreachable } from '../../core/assert.ts';
import { ConfigError, RestoreError, StorageError } from '../../core/errors.ts';
import type { CheckpointId, KeyGroup } from '../../core/ids.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { KeyedState, KeyedStateBackend, RestoreOptions, SnapshotOptions, SnapshotRunner, StateChangeListener, StateReader } from '../backend.ts';
import { decodeValue } from '../codec.ts';
import type { StateDescriptor, StateKind } from '../descriptors.ts';
import { MAX_PARALLELISM_LIMIT, rangeSize, type Key, type KeyGroupRange } from '../key-groups.ts';
import { planSnapshot, restoredChain, type CompletedChain } from '../incremental/chain.ts';
import { ChangeTracker, changeSlot, type ChangeSet } from '../incremental/change-tracker.ts';
import type { KeyedStateHandle } from '../handles/registry.ts';
import { restoreKeyedHandles } from '../handles/restore.ts';
import { toWorkingValue } from '../formats/keyed-stream.ts';
import { EmbeddedKeyedSnapshot, storedBytes, type SnapshotPlan } from './embedded-snapshot.ts';
import {
  EmbeddedAggregatingState,
  EmbeddedListState,
  EmbeddedMapState,
  EmbeddedReducingState,
  EmbeddedValueState,
  type SlotAccess,
} from './embedded-states.ts';
import { LocalStore } from './local-store.ts';
import { ABSENT, Slot, SlotTable, type SlotMap } from './slot-table.ts';
import { decodeUserKey, encodeUserKey, keyGroupOfStoreKey, stateIdOfStoreKey, storeKeyOf, storeKeyPrefix } from './store-keys.ts';

export interface EmbeddedBackendOptions {
  /** Directory under which each subtask's working-state directory is created; default the OS temp dir. */
  readonly localDir?: string;
  /** Cached entries (hot and dirty) kept in memory before evicting to the local store. */
  readonly cacheEntriesMax?: number;
  /** Checkpoint only what changed since the last completed checkpoint (default true). */
  readonly incremental?: boolean;
  /** A new base is written once the increments would pass this share of the base (default 1). */
  readonly incrementsShareMax?: number;
  /** Entries a snapshot's async part reads and encodes between two pauses (default 1024, chosen by bench/scenarios/stall.ts; tests use fewer). */
  readonly snapshotEntriesPerStep?: number;
}

/**
 * Slots one sweep evicts: 1/128 of the cache, at least min(64, 1/8 of it). A sweep writes its dirty
 * slots in one synchronous transaction on the record path, at ~8 µs a random key into a 1 M-key
 * store: an eighth of a 100,000-slot cache took 95 ms on average and up to 332 ms (the changelog
 * bench's record gaps); 1/128 takes 5 ms on average, 28 ms at most, with the same total time and
 * CPU per record within the runs' noise (BENCHMARKS.md, changelog).
 */
export function evictionsPerSweep(cacheEntriesMax: number): number {
  return Math.max(Math.ceil(cacheEntriesMax / 128), Math.min(64, Math.ceil(cacheEntriesMax / 8)));
}

/**
 * Distinct changed keys the change tracker follows before it gives up (and the next snapshot writes a
 * base). A tracked key is an entry of a set, ~40 bytes for a number key, against a cached slot with
 * its value several times that, so eight times the cache's entries take about the cache's memory.
 * The tracker must outlast a base: it follows the changes made while a base is written, and once
 * those pass the bound the next snapshot is a base too, so a base that takes longer than the bound's
 * worth of updates makes every later one a base. At twice the cache (until 2026-12-05) a 1 M-key
 * store updated 50,000 times a second fell into that: 10 s bases, one after another
 * (BENCHMARKS.md, changelog).
 */
export function trackedKeysMaxFor(cacheEntriesMax: number): number {
  return Math.max(10_000, 8 * cacheEntriesMax);
}

export const EMBEDDED_DEFAULTS = { cacheEntriesMax: 100_000, incremental: true, incrementsShareMax: 1, snapshotEntriesPerStep: 1024 } as const;

/** Finished snapshots kept for a completion notice; older ones are dropped (their notice was lost). */
const SNAPSHOTS_KEPT_MAX = 64;
/** Restore writes the store in transactions of at most this many entries. */
const RESTORE_BATCH_ENTRIES = 50_000;
/** A rough size per entry, for the sync-phase estimate only. */
const ESTIMATED_BYTES_PER_ENTRY = 64;

export interface EmbeddedKeyedBackendArgs {
  readonly uid: string;
  readonly subtask: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
}

/** Keyed state of one operator subtask in a local lmdb store behind a bounded cache. */
export class EmbeddedKeyedStateBackend implements KeyedStateBackend, SlotAccess {
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  private readonly uid: string;
  private readonly subtask: number;
  private readonly groupCount: number;
  private readonly cacheEntriesMax: number;
  private readonly incrementsShareMax: number;
  private readonly snapshotEntriesPerStep: number;
  private readonly store: LocalStore;
  private key: Key = '';
  private keyGroup = -1;
  private index = -1;
  private listener: StateChangeListener | null = null;
  private readonly tables = new Map<string, SlotTable>();
  /** Ascending by state id. */
  private readonly tableList: SlotTable[] = [];
  private readonly states: StateRegistry = new Map();
  /** Keys with a value, by state id. */
  private readonly counts: number[] = [0];
  private cachedSlots = 0;
  /** The slot the last access of the current key found (a read and the write after it share it). */
  private memoTable: SlotTable | null = null;
  private memoSlot: Slot | null = null;
  private handTable = 0;
  private handGroup = 0;
  /** Incremented by every sync part; slots of earlier epochs may be seen by a live snapshot. */
  private epoch = 0;
  private liveSnapshots = 0;
  /** Snapshots taken and not yet completed, aborted or dropped. */
  private readonly snapshots = new Map<number, EmbeddedKeyedSnapshot>();
  private readonly tracker: ChangeTracker | null;
  /** The chain of the newest completed checkpoint, which deltas extend. */
  private lastCompleted: CompletedChain | null = null;
  private disposed = false;

  constructor(args: EmbeddedKeyedBackendArgs, options: EmbeddedBackendOptions = {}) {
    const { keyGroupRange: range, maxParallelism: m } = args;
    assert(Number.isInteger(m) && m >= 1 && m <= MAX_PARALLELISM_LIMIT, () => `maxParallelism ${m} out of [1, ${MAX_PARALLELISM_LIMIT}]`);
    assert(
      Number.isInteger(range.start) && Number.isInteger(range.end) && range.start >= 0 && range.end < m && rangeSize(range) > 0,
      () => `key-group range [${range.start}, ${range.end}] is empty or outside [0, ${m})`,
    );
    this.keyGroupRange = { start: range.start, end: range.end };
    this.maxParallelism = m;
    this.uid = args.uid;
    this.subtask = args.subtask;
    this.groupCount = rangeSize(range);
    this.cacheEntriesMax = options.cacheEntriesMax ?? EMBEDDED_DEFAULTS.cacheEntriesMax;
    this.incrementsShareMax = options.incrementsShareMax ?? EMBEDDED_DEFAULTS.incrementsShareMax;
    this.snapshotEntriesPerStep = options.snapshotEntriesPerStep ?? EMBEDDED_DEFAULTS.snapshotEntriesPerStep;
    assert(
      Number.isInteger(this.snapshotEntriesPerStep) && this.snapshotEntriesPerStep >= 1,
      () => `snapshotEntriesPerStep must be an integer >= 1, got ${this.snapshotEntriesPerStep}`,
    );
    assert(
      Number.isInteger(this.cacheEntriesMax) && this.cacheEntriesMax >= 1,
      () => `cacheEntriesMax must be a positive integer, got ${this.cacheEntriesMax}`,
    );
    assert(this.incrementsShareMax > 0, () => `incrementsShareMax must be > 0, got ${this.incrementsShareMax}`);
    this.tracker = (options.incremental ?? EMBEDDED_DEFAULTS.incremental) ? new ChangeTracker(trackedKeysMaxFor(this.cacheEntriesMax)) : null;
    this.store = LocalStore.create(options.localDir ?? tmpdir(), `${this.uid}-${this.subtask}`);
  }

  /** The local directory holding this backend's working state (deleted by `dispose`). */
  get directory(): string {
    return this.store.dir;
  }

  /** Entries held in the cache now (for tests and figures). */
  get cachedEntries(): number {
    return this.cachedSlots;
  }

  setCurrentKey(key: Key, keyGroup: KeyGroup): void {
    const index = keyGroup - this.keyGroupRange.start;
    if (!(index >= 0 && index < this.groupCount)) {
      throw new AssertionError(
        `${this.uid}/${this.subtask}: key group ${keyGroup} of key ${String(key)} is outside [${this.keyGroupRange.start}, ${this.keyGroupRange.end}]`,
      );
    }
    this.key = key;
    this.keyGroup = keyGroup;
    this.index = index;
    this.memoTable = null;
  }

  getCurrentKey(): Key {
    assert(this.index >= 0, 'getCurrentKey: no current key was set');
    return this.key;
  }

  getCurrentKeyGroup(): KeyGroup {
    assert(this.index >= 0, 'getCurrentKeyGroup: no current key was set');
    return this.keyGroup as KeyGroup;
  }

  getState<S>(descriptor: StateDescriptor): S {
    return registeredState<S>(this.states, descriptor, () => this.createState(descriptor, this.tableFor(descriptor.name, descriptor.kind, 'register')));
  }

  private createState(descriptor: StateDescriptor, table: SlotTable): KeyedState {
    switch (descriptor.kind) {
      case 'value':
        return new EmbeddedValueState(this, table, descriptor.defaultValue);
      case 'list':
        return new EmbeddedListState(this, table);
      case 'map':
        return new EmbeddedMapState(this, table);
      case 'reducing':
        return new EmbeddedReducingState(this, table, descriptor.reduce);
      case 'aggregating':
        return new EmbeddedAggregatingState(this, table, descriptor.aggregate);
      default:
        return unreachable(descriptor, 'state descriptor kind');
    }
  }

  private tableFor(name: string, kind: StateKind, purpose: 'register' | 'restore'): SlotTable {
    const existing = this.tables.get(name);
    if (existing === undefined) {
      const stateId = this.tableList.length + 1;
      assert(stateId < 0xffff, () => `${this.uid}/${this.subtask}: too many states`);
      const table = new SlotTable(name, kind, stateId, this.groupCount);
      this.tables.set(name, table);
      this.tableList.push(table);
      this.counts.push(0);
      return table;
    }
    if (existing.kind === kind) return existing;
    if (purpose === 'register') throw new ConfigError(`state "${name}"`, `restored as ${existing.kind} state, requested as ${kind} state`);
    throw new RestoreError(`${this.uid}/${this.subtask}: state "${name}" is ${existing.kind} state here but ${kind} state in the snapshot`);
  }

  // ---- the cache (SlotAccess) ----

  private lookup(table: SlotTable): Slot | undefined {
    if (table === this.memoTable) return this.memoSlot!;
    const slot = table.groups[this.index]?.get(this.key);
    if (slot !== undefined) this.remember(table, slot);
    return slot;
  }

  private remember(table: SlotTable, slot: Slot): Slot {
    this.memoTable = table;
    this.memoSlot = slot;
    return slot;
  }

  /** Reads the current key from the store into a new clean slot. */
  private load(table: SlotTable): Slot {
    if (this.index < 0) throw new AssertionError(`state "${table.name}": no current key was set`);
    this.makeRoom();
    const stored = this.store.read(storeKeyOf(this.keyGroup, table.stateId, encodeUserKey(this.key), table.name), decodeValue);
    let value: unknown = ABSENT;
    if (stored !== undefined) {
      const corrupt = (what: string) => new StorageError('CORRUPT_FILE', this.store.dir, `key ${String(this.key)}: ${what}`);
      value = toWorkingValue(table.kind, stored, corrupt, table.name);
    }
    const slot = new Slot(value, false, this.epoch);
    table.writable(this.index).set(this.key, slot);
    this.cachedSlots++;
    return this.remember(table, slot);
  }

  /** `slot`, or a copy of it in the current map when a live snapshot may see it. */
  private own(table: SlotTable, slot: Slot, copyValue: (v: unknown) => unknown = (v) => v): Slot {
    if (this.liveSnapshots === 0 || slot.epoch === this.epoch) return slot;
    const fresh = new Slot(slot.value === ABSENT ? ABSENT : copyValue(slot.value), slot.dirty, this.epoch);
    table.writable(this.index).set(this.key, fresh);
    return this.remember(table, fresh);
  }

  private changed(table: SlotTable, slot: Slot): void {
    slot.dirty = true;
    slot.hot = true;
    if (this.tracker !== null && slot.trackedEpoch !== this.epoch) {
      slot.trackedEpoch = this.epoch;
      this.tracker.record(changeSlot(table.stateId, this.index), this.key);
    }
  }

  read(table: SlotTable): unknown {
    const slot = this.lookup(table) ?? this.load(table);
    slot.hot = true;
    return slot.value === ABSENT ? undefined : slot.value;
  }

  write(table: SlotTable, value: unknown, op: Parameters<StateChangeListener['onChange']>[3], mapKey?: unknown): void {
    let slot = this.lookup(table) ?? this.load(table);
    const had = slot.value !== ABSENT;
    if (value === undefined && !had) return;
    slot = this.own(table, slot);
    slot.value = value === undefined ? ABSENT : value;
    this.counts[table.stateId]! += (value === undefined ? 0 : 1) - (had ? 1 : 0);
    this.changed(table, slot);
    this.notify(table, op, value, mapKey);
  }

  editable<C>(table: SlotTable, create: (() => C) | null, copy: (c: C) => C): C | undefined {
    let slot = this.lookup(table) ?? this.load(table);
    if (slot.value === ABSENT) {
      if (create === null) return undefined;
      slot = this.own(table, slot);
      slot.value = create();
      this.counts[table.stateId]!++;
    } else {
      slot = this.own(table, slot, copy as (v: unknown) => unknown);
    }
    this.changed(table, slot);
    return slot.value as C;
  }

  notify(table: SlotTable, op: Parameters<StateChangeListener['onChange']>[3], value: unknown, mapKey?: unknown): void {
    const listener = this.listener;
    if (listener === null) return;
    if (mapKey === undefined) listener.onChange(table.name, this.keyGroup as KeyGroup, this.key, op, value);
    else listener.onChange(table.name, this.keyGroup as KeyGroup, this.key, op, value, mapKey);
  }

  /**
   * Keeps the cache within `cacheEntriesMax`, `evictionsPerSweep` slots at a time: a CLOCK sweep
   * over the key-group maps keeps slots used since its last visit and evicts the others, writing
   * dirty ones to the store in one transaction, key group by key group (after preserving what
   * running snapshots still need to read).
   */
  private makeRoom(): void {
    if (this.cachedSlots < this.cacheEntriesMax) return;
    this.memoTable = null;
    this.store.writeBatches((write) => this.sweep(write));
  }

  private sweep(write: (batch: Array<readonly [Buffer, Uint8Array | null]>) => void): void {
    const target = this.cacheEntriesMax - evictionsPerSweep(this.cacheEntriesMax);
    const preserving = [...this.snapshots.values()].filter((s) => s.needsPreImages);
    const tables = this.tableList;
    for (let visited = 0; this.cachedSlots > target && visited < 2 * tables.length * this.groupCount; visited++) {
      const table = tables[this.handTable]!;
      const index = this.handGroup;
      if (++this.handGroup === this.groupCount) {
        this.handGroup = 0;
        this.handTable = (this.handTable + 1) % tables.length;
      }
      const map = table.groups[index];
      if (map === undefined || map.size === 0) continue;
      // Evicts in place (deleting while iterating is safe for a Map); a map a snapshot pinned is
      // rebuilt instead. Rebuilding every map visited made each sweep old-space garbage.
      const keep: SlotMap | null = table.pins[index] === 0 ? null : new Map();
      const writes: Array<readonly [Buffer, Uint8Array | null]> = [];
      for (const [key, slot] of map) {
        if (slot.hot) {
          slot.hot = false;
          keep?.set(key, slot);
          continue;
        }
        this.cachedSlots--;
        if (keep === null) map.delete(key);
        if (!slot.dirty) continue;
        const storeKey = storeKeyOf(this.keyGroupRange.start + index, table.stateId, encodeUserKey(key), table.name);
        for (const s of preserving) s.preserve(table.stateId, index, key, storeKey);
        writes.push([storeKey, slot.value === ABSENT ? null : storedBytes(table.kind, slot.value)]);
      }
      if (keep !== null) table.replace(index, keep);
      if (writes.length > 0) write(writes);
    }
  }

  // ---- snapshots ----

  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory, options?: SnapshotOptions): SnapshotRunner<KeyedStateHandle[]> {
    assert(!this.snapshots.has(checkpointId), () => `${this.uid}/${this.subtask}: checkpoint ${checkpointId} snapshotted twice`);
    const savepoint = options?.kind === 'savepoint';
    this.epoch++;
    this.liveSnapshots++;
    const captured = this.tableList.map((table) => ({ table, groups: table.capture() }));
    const keyCounts = this.keyCounts();
    let plan: SnapshotPlan = 'full';
    let changes: readonly ChangeSet[] = [];
    let parent: CompletedChain | null = null;
    if (this.tracker !== null && !savepoint) {
      const closed = this.tracker.close(checkpointId);
      const chain = this.lastCompleted;
      const changesKnown = closed.complete && chain !== null && this.tracker.canExtend(chain.checkpointId);
      plan = planSnapshot({ chain, changesKnown, changedKeys: closed.complete ? closed.keys : Infinity, incrementsShareMax: this.incrementsShareMax });
      if (plan === 'delta' && closed.complete) {
        changes = closed.changes;
        parent = chain;
      }
    }
    const range = this.keyGroupRange;
    let entries = 0;
    for (const n of Object.values(keyCounts)) entries += n;
    const snapshot = new EmbeddedKeyedSnapshot(
      {
        checkpointId,
        plan,
        uid: this.uid,
        subtask: this.subtask,
        range,
        streams,
        store: this.store,
        captured,
        changes,
        parent,
        knownCompleted: this.tracker === null ? null : (this.lastCompleted?.checkpointId ?? null),
        keyCounts,
        savepoint,
        entriesPerStep: this.snapshotEntriesPerStep,
      },
      entries * ESTIMATED_BYTES_PER_ENTRY,
      () => this.liveSnapshots--,
    );
    this.snapshots.set(checkpointId, snapshot);
    this.dropOldSnapshots();
    return snapshot;
  }

  private dropOldSnapshots(): void {
    if (this.snapshots.size <= SNAPSHOTS_KEPT_MAX) return;
    const oldest = Math.min(...this.snapshots.keys());
    this.snapshots.get(oldest)!.release();
    this.snapshots.delete(oldest);
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    const done = this.snapshots.get(checkpointId);
    if (done !== undefined && done.chain !== null && !done.args.savepoint && this.tracker !== null) {
      if (this.lastCompleted === null || checkpointId > this.lastCompleted.checkpointId) {
        this.lastCompleted = done.chain;
        this.tracker.confirm(checkpointId);
      }
    }
    // Completing n subsumes every earlier checkpoint: their captures are no longer needed.
    for (const [id, s] of [...this.snapshots]) {
      if (id <= checkpointId) {
        s.release();
        this.snapshots.delete(id);
      }
    }
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    // Its changes stay in the tracker's unconfirmed epochs, so the next delta includes them.
    this.snapshots.get(checkpointId)?.release();
    this.snapshots.delete(checkpointId);
  }

  // ---- restore ----

  async restore(handles: readonly KeyedStateHandle[], read: StateReader, options?: RestoreOptions): Promise<void> {
    assert(this.cachedSlots === 0 && !this.counts.some((n) => n !== 0), () => `${this.uid}/${this.subtask}: restore into a backend that already holds state`);
    // A key group arrives whole (base and increments applied in order): the last write of a key
    // wins in memory, and each key is written to the store once, in batches of whole key groups.
    let batch = new Map<string, readonly [Buffer, Uint8Array | null]>();
    let pending: Array<readonly [Buffer, Uint8Array | null]> = [];
    const flush = () => {
      this.store.write(pending);
      pending = [];
    };
    const endKeyGroup = () => {
      for (const entry of batch.values()) pending.push(entry);
      batch = new Map();
      if (pending.length >= RESTORE_BATCH_ENTRIES) flush();
    };
    const add = (name: string, kind: StateKind, keyGroup: number, key: Key, bytes: Uint8Array | null) => {
      const table = this.tableFor(name, kind, 'restore');
      const storeKey = storeKeyOf(keyGroup, table.stateId, encodeUserKey(key), name);
      batch.set(storeKey.toString('latin1'), [storeKey, bytes]);
    };
    await restoreKeyedHandles(
      handles,
      this.keyGroupRange,
      this.maxParallelism,
      read,
      {
        put: (name, kind, keyGroup, key, value) => add(name, kind, keyGroup, key, storedBytes(kind, value)),
        // storedBytes of these kinds is encodeValue's: the bytes are stored as they are.
        putEncoded: (name, kind, keyGroup, key, bytes) => add(name, kind, keyGroup, key, bytes),
        remove: (name, kind, keyGroup, key) => add(name, kind, keyGroup, key, null),
        endKeyGroup,
      },
      `${this.uid}/${this.subtask}`,
    );
    endKeyGroup();
    flush();
    for (const table of this.tableList) {
      let n: number = 0;
      for (let kg = this.keyGroupRange.start; kg <= this.keyGroupRange.end; kg++) {
        n += this.store.count(storeKeyPrefix(kg, table.stateId), storeKeyPrefix(kg, table.stateId + 1));
      }
      this.counts[table.stateId] = n;
    }
    if (this.tracker !== null && options?.firstCheckpointFull !== true) this.lastCompleted = restoredChain(handles, this.keyGroupRange);
  }

  // ---- inspection ----

  keyCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const t of this.tableList) Object.defineProperty(out, t.name, { value: this.counts[t.stateId], enumerable: true, writable: true, configurable: true });
    return out;
  }

  entries(stateName: string): Array<[Key, unknown]> {
    const table = this.tables.get(stateName);
    if (table === undefined) return [];
    const out: Array<[Key, unknown]> = [];
    for (let index = 0; index < this.groupCount; index++) {
      const kg = this.keyGroupRange.start + index;
      const cached = table.groups[index];
      const cursor = this.store.cursor(storeKeyPrefix(kg, table.stateId), storeKeyPrefix(kg, table.stateId + 1));
      for (let e = cursor.peek(); e !== null; cursor.advance(), e = cursor.peek()) {
        assert(keyGroupOfStoreKey(e.key) === kg && stateIdOfStoreKey(e.key) === table.stateId, 'store cursor left its range');
        const key = decodeUserKey(e.key);
        if (cached?.has(key) === true) continue;
        const corrupt = (what: string) => new StorageError('CORRUPT_FILE', this.store.dir, what);
        out.push([key, toWorkingValue(table.kind, decodeValue(e.value), corrupt, table.name)]);
      }
      cursor.close();
      if (cached !== undefined) for (const [key, slot] of cached) if (slot.value !== ABSENT) out.push([key, copyContainer(slot.value)]);
    }
    return out;
  }

  setChangeListener(listener: StateChangeListener | null): void {
    this.listener = listener;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const s of this.snapshots.values()) s.release();
    this.snapshots.clear();
    // Like the heap backend's, a disposed backend holds and reports no state.
    this.tables.clear();
    this.tableList.length = 0;
    this.counts.length = 1;
    this.states.clear();
    this.listener = null;
    this.store.close();
  }
}

/** Inspection returns copies of lists and maps so callers cannot alter working state. */
function copyContainer(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (value instanceof Map) return new Map(value);
  return value;
}
