/**
 * The heap keyed state backend: working state in per-key-group JS maps, snapshots by copy-on-write
 * (sync part O(key groups)), one key-group-indexed stream per snapshot, restore from snapshots of
 * any parallelism by decoding only the key groups this backend owns.
 */
import { registeredState, type StateRegistry } from '../state-registry.ts';
import { AssertionError, assert, unreachable } from '../../core/assert.ts';
import { ConfigError, RestoreError } from '../../core/errors.ts';
import type { CheckpointId, KeyGroup } from '../../core/ids.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { KeyedState, KeyedStateBackend, SnapshotRunner, StateChangeListener, StateReader } from '../backend.ts';
import type { StateDescriptor, StateKind } from '../descriptors.ts';
import { rangeSize, MAX_PARALLELISM_LIMIT, type Key, type KeyGroupRange } from '../key-groups.ts';
import { HeapAggregatingState, HeapReducingState, HeapValueState } from './heap-value-states.ts';
import { HeapKeyedSnapshot } from './heap-keyed-snapshot.ts';
import { HeapListState } from './heap-list-state.ts';
import { HeapMapState } from './heap-map-state.ts';
import { KeyContext } from './key-context.ts';
import { StateTable } from './state-table.ts';
import type { KeyGroupsStateHandle } from '../handles/key-groups.ts';
import type { KeyedStateHandle } from '../handles/registry.ts';
import { restoreKeyedHandles } from '../handles/restore.ts';

/** A rough size per stored entry, for the sync-phase estimate only. */
const ESTIMATED_BYTES_PER_ENTRY = 64;

export interface HeapKeyedBackendArgs {
  readonly uid: string;
  readonly subtask: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
}

/** Keyed state of one operator subtask, held in memory for the key groups of its range. */
export class HeapKeyedStateBackend implements KeyedStateBackend {
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  private readonly uid: string;
  private readonly subtask: number;
  private readonly groupCount: number;
  private readonly ctx = new KeyContext();
  private readonly tables = new Map<string, StateTable>();
  private readonly states: StateRegistry = new Map();
  private readonly pending = new Map<number, HeapKeyedSnapshot>();

  constructor(args: HeapKeyedBackendArgs) {
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
  }

  setCurrentKey(key: Key, keyGroup: KeyGroup): void {
    const index = keyGroup - this.keyGroupRange.start;
    if (!(index >= 0 && index < this.groupCount)) {
      throw new AssertionError(
        `${this.uid}/${this.subtask}: key group ${keyGroup} of key ${String(key)} is outside [${this.keyGroupRange.start}, ${this.keyGroupRange.end}]`,
      );
    }
    const ctx = this.ctx;
    ctx.key = key;
    ctx.keyGroup = keyGroup;
    ctx.index = index;
  }

  getCurrentKey(): Key {
    assert(this.ctx.index >= 0, 'getCurrentKey: no current key was set');
    return this.ctx.key;
  }

  getCurrentKeyGroup(): KeyGroup {
    assert(this.ctx.index >= 0, 'getCurrentKeyGroup: no current key was set');
    return this.ctx.keyGroup;
  }

  getState<S>(descriptor: StateDescriptor): S {
    return registeredState<S>(this.states, descriptor, () => this.createState(descriptor, this.tableFor(descriptor.name, descriptor.kind, 'register')));
  }

  private createState(descriptor: StateDescriptor, table: StateTable): KeyedState {
    switch (descriptor.kind) {
      case 'value':
        return new HeapValueState(this.ctx, table, descriptor.defaultValue);
      case 'list':
        return new HeapListState(this.ctx, table);
      case 'map':
        return new HeapMapState(this.ctx, table);
      case 'reducing':
        return new HeapReducingState(this.ctx, table, descriptor.reduce);
      case 'aggregating':
        return new HeapAggregatingState(this.ctx, table, descriptor.aggregate);
      default:
        return unreachable(descriptor, 'state descriptor kind');
    }
  }

  private tableFor(name: string, kind: StateKind, purpose: 'register' | 'restore'): StateTable {
    const existing = this.tables.get(name);
    if (existing === undefined) {
      const table = new StateTable(name, kind, this.groupCount);
      this.tables.set(name, table);
      return table;
    }
    if (existing.kind === kind) return existing;
    if (purpose === 'register') {
      throw new ConfigError(`state "${name}"`, `restored as ${existing.kind} state, requested as ${kind} state`);
    }
    throw new RestoreError(`${this.uid}/${this.subtask}: state "${name}" is ${existing.kind} state here but ${kind} state in the snapshot`);
  }

  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory): SnapshotRunner<KeyGroupsStateHandle[]> {
    assert(!this.pending.has(checkpointId), () => `${this.uid}/${this.subtask}: checkpoint ${checkpointId} snapshotted twice`);
    // O(states x key groups) pointer copies; nothing here touches the maps themselves.
    const captured = [];
    for (const table of this.tables.values()) captured.push({ table, groups: table.capture() });
    this.ctx.beginSnapshot();
    const target = { uid: this.uid, subtask: this.subtask, range: this.keyGroupRange, streams };
    const snapshot = new HeapKeyedSnapshot(checkpointId, captured, target, ESTIMATED_BYTES_PER_ENTRY, (s) => {
      this.ctx.endSnapshot();
      this.pending.delete(s.checkpointId);
    });
    this.pending.set(checkpointId, snapshot);
    return snapshot;
  }

  async restore(handles: readonly KeyedStateHandle[], read: StateReader): Promise<void> {
    // Restore writes the maps directly; nothing a state object resolved before may be used after.
    this.ctx.version++;
    const start = this.keyGroupRange.start;
    // Entries arrive state by state within a key group: look the map up once per run of them.
    let last: { name: string; kind: StateKind; keyGroup: number; map: Map<Key, unknown> } | null = null;
    const mapOf = (name: string, kind: StateKind, keyGroup: number): Map<Key, unknown> => {
      if (last === null || last.name !== name || last.kind !== kind || last.keyGroup !== keyGroup) {
        last = { name, kind, keyGroup, map: this.tableFor(name, kind, 'restore').writable(keyGroup - start) };
      }
      return last.map;
    };
    await restoreKeyedHandles(
      handles,
      this.keyGroupRange,
      this.maxParallelism,
      read,
      {
        put: (name, kind, keyGroup, key, value) => void mapOf(name, kind, keyGroup).set(key, value),
        remove: (name, kind, keyGroup, key) => void mapOf(name, kind, keyGroup).delete(key),
      },
      `${this.uid}/${this.subtask}`,
    );
    this.ctx.version++;
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    // Completing n subsumes every earlier checkpoint, so their captures are no longer needed.
    for (const snapshot of [...this.pending.values()]) {
      if (snapshot.checkpointId <= checkpointId) snapshot.release();
    }
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.pending.get(checkpointId)?.release();
  }

  keyCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const table of this.tables.values()) counts[table.name] = table.keyCount();
    return counts;
  }

  entries(stateName: string): Array<[Key, unknown]> {
    const table = this.tables.get(stateName);
    if (table === undefined) return [];
    const out: Array<[Key, unknown]> = [];
    for (const map of table.groups) {
      if (map === undefined) continue;
      for (const [key, value] of map) out.push([key, copyContainer(value)]);
    }
    return out;
  }

  setChangeListener(listener: StateChangeListener | null): void {
    this.ctx.listener = listener;
  }

  dispose(): void {
    this.ctx.version++;
    for (const snapshot of [...this.pending.values()]) snapshot.release();
    this.tables.clear();
    this.states.clear();
    this.ctx.listener = null;
  }
}

/** Inspection returns copies of lists and maps so callers cannot alter working state. */
function copyContainer(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  if (value instanceof Map) return new Map(value);
  return value;
}
