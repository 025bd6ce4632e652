/**
 * The heap operator state backend: named list states of one subtask, each either split or union
 * redistributed on rescale; snapshots copy-on-write (the sync part only marks lists shared) and
 * write all lists into one stream.
 */
import { assert } from '../../core/assert.ts';
import { ConfigError, RestoreError } from '../../core/errors.ts';
import type { CheckpointId } from '../../core/ids.ts';
import type { OperatorStateHandle, OperatorStateMode } from '../../storage/handles.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { OperatorStateBackend, SnapshotRunner, StateReader } from '../backend.ts';
import type { ListStateDescriptor } from '../descriptors.ts';
import { redistributeListEntries } from '../redistribute.ts';
import type { ListState } from '../state.ts';
import { encodeOperatorStream, readOperatorHandle, type OperatorListSnapshot } from '../formats/operator-stream.ts';

/** One operator list state; its array is replaced, not mutated, while a snapshot holds it. */
class HeapOperatorListState implements ListState<unknown> {
  private values: unknown[] = [];
  /** True while the current array may be held by a snapshot. */
  shared = false;

  constructor(
    readonly name: string,
    readonly mode: OperatorStateMode,
  ) {}

  get(): readonly unknown[] {
    return this.values;
  }

  add(value: unknown): void {
    this.writable().push(value);
  }

  addAll(values: readonly unknown[]): void {
    const list = this.writable();
    for (let i = 0; i < values.length; i++) list.push(values[i]);
  }

  update(values: readonly unknown[]): void {
    this.values = values.slice();
    this.shared = false;
  }

  clear(): void {
    this.update([]);
  }

  capture(): OperatorListSnapshot {
    this.shared = true;
    return { name: this.name, mode: this.mode, entries: this.values };
  }

  private writable(): unknown[] {
    if (this.shared) {
      this.values = this.values.slice();
      this.shared = false;
    }
    return this.values;
  }
}

/** Operator (non-keyed) list states of one operator subtask, held in memory. */
export class HeapOperatorStateBackend implements OperatorStateBackend {
  private readonly uid: string;
  private readonly subtask: number;
  private readonly lists = new Map<string, HeapOperatorListState>();

  constructor(args: { uid: string; subtask: number }) {
    this.uid = args.uid;
    this.subtask = args.subtask;
  }

  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T> {
    return this.register(descriptor.name, 'split', 'register') as ListState<T>;
  }

  getUnionListState<T>(descriptor: ListStateDescriptor<T>): ListState<T> {
    return this.register(descriptor.name, 'union', 'register') as ListState<T>;
  }

  private register(name: string, mode: OperatorStateMode, purpose: 'register' | 'restore'): HeapOperatorListState {
    const existing = this.lists.get(name);
    if (existing === undefined) {
      const list = new HeapOperatorListState(name, mode);
      this.lists.set(name, list);
      return list;
    }
    if (existing.mode === mode) return existing;
    if (purpose === 'register') {
      throw new ConfigError(`operator state "${name}"`, `registered as ${existing.mode} list state, requested as ${mode} list state`);
    }
    throw new RestoreError(`${this.uid}/${this.subtask}: operator state "${name}" is ${existing.mode} list state here but ${mode} in the snapshot`);
  }

  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory): SnapshotRunner<OperatorStateHandle | null> {
    const captured = [...this.lists.values()].map((l) => l.capture());
    let started = false;
    const { uid, subtask } = this;
    return {
      syncInfo: { stateBytesEstimate: captured.reduce((n, l) => n + 32 * l.entries.length, 0) },
      async run(): Promise<OperatorStateHandle | null> {
        assert(!started, () => `operator snapshot for checkpoint ${checkpointId} run twice`);
        started = true;
        if (captured.length === 0) return null;
        const stream = await streams.write('exclusive', `operator-${uid}-${subtask}`, encodeOperatorStream(captured));
        return { type: 'operator', states: captured.map((l) => ({ name: l.name, mode: l.mode, count: l.entries.length })), stream };
      },
    };
  }

  /** Appends the entries of `handles` (this subtask's share, already redistributed) in handle order. */
  async restore(handles: readonly OperatorStateHandle[], read: StateReader): Promise<void> {
    for (const handle of handles) {
      for (const list of await readOperatorHandle(handle, read)) {
        this.register(list.name, list.mode, 'restore').addAll(list.entries);
      }
    }
  }

  /**
   * Restores from every old subtask's handle (index = old subtask; null where it had no operator
   * state) and keeps this subtask's share of each list, as `redistributeListEntries` deals them.
   */
  async restoreRedistributed(
    allOldHandles: ReadonlyArray<OperatorStateHandle | null>,
    read: StateReader,
    subtask: number,
    newParallelism: number,
  ): Promise<void> {
    assert(Number.isInteger(subtask) && subtask >= 0 && subtask < newParallelism, () => `subtask ${subtask} outside [0, ${newParallelism})`);
    const byName = new Map<string, { mode: OperatorStateMode; perSubtask: unknown[][] }>();
    for (let old = 0; old < allOldHandles.length; old++) {
      const handle = allOldHandles[old]!;
      if (handle === null) continue;
      for (const list of await readOperatorHandle(handle, read)) {
        let slot = byName.get(list.name);
        if (slot === undefined) {
          slot = { mode: list.mode, perSubtask: allOldHandles.map(() => []) };
          byName.set(list.name, slot);
        } else if (slot.mode !== list.mode) {
          throw new RestoreError(`${this.uid}: operator state "${list.name}" is ${slot.mode} in one old subtask and ${list.mode} in another`);
        }
        slot.perSubtask[old] = list.entries as unknown[];
      }
    }
    for (const [name, { mode, perSubtask }] of byName) {
      this.register(name, mode, 'restore').addAll(redistributeListEntries(mode, perSubtask, newParallelism)[subtask]!);
    }
  }

  dispose(): void {
    this.lists.clear();
  }
}
