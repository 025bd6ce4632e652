/** Shared set-up for embedded backend tests: backends of both kinds, every state kind, whole-backend dumps. */
import { rmSync } from 'node:fs';
import { checkpointId, keyGroup } from '../../../src/core/ids.ts';
import type { KeyedStateBackend, StateReader } from '../../../src/state/backend.ts';
import { EmbeddedKeyedStateBackend, type EmbeddedBackendOptions } from '../../../src/state/embedded/embedded-keyed-backend.ts';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup, type Key, type KeyGroupRange } from '../../../src/state/key-groups.ts';
import type { KeyedStateHandle } from '../../../src/state/handles/registry.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import type { CheckpointStreamFactory, StateScope } from '../../../src/storage/storage.ts';
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from '../../../src/state/state.ts';
import { descriptors } from '../heap/fixtures.ts';
import type { SeededRandom } from '../../../src/core/time.ts';

export const M = 128;
export const FULL: KeyGroupRange = { start: 0, end: M - 1 };

const opened: EmbeddedKeyedStateBackend[] = [];

export function embedded(options: EmbeddedBackendOptions = {}, range: KeyGroupRange = FULL, subtask = 0): EmbeddedKeyedStateBackend {
  const b = new EmbeddedKeyedStateBackend({ uid: 'op', subtask, keyGroupRange: range, maxParallelism: M }, options);
  opened.push(b);
  return b;
}

export function heap(range: KeyGroupRange = FULL, subtask = 0): HeapKeyedStateBackend {
  return new HeapKeyedStateBackend({ uid: 'op', subtask, keyGroupRange: range, maxParallelism: M });
}

/** Disposes every embedded backend a test opened (and so deletes its directory). */
export function disposeAll(): void {
  for (const b of opened.splice(0)) {
    const dir = b.directory;
    b.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function setKey(backend: KeyedStateBackend, key: Key): void {
  backend.setCurrentKey(key, keyGroup(assignToKeyGroup(key, backend.maxParallelism)));
}

export interface AllStates {
  value: ValueState<number>;
  list: ListState<string>;
  map: MapState<string | number, number>;
  reducing: ReducingState<number>;
  aggregating: AggregatingState<number, number>;
}

export function allStates(backend: KeyedStateBackend): AllStates {
  return {
    value: backend.getState(descriptors.value),
    list: backend.getState(descriptors.list),
    map: backend.getState(descriptors.map),
    reducing: backend.getState(descriptors.reducing),
    aggregating: backend.getState(descriptors.aggregating),
  };
}

export const STATE_NAMES = ['value', 'list', 'map', 'sum', 'avg'] as const;

const byKey = (a: [Key, unknown], b: [Key, unknown]) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0);

/** Every state's entries, sorted by key, for comparing whole backends. */
export function dump(backend: KeyedStateBackend, names: readonly string[] = STATE_NAMES): Record<string, Array<[Key, unknown]>> {
  const out: Record<string, Array<[Key, unknown]>> = {};
  for (const name of names) out[name] = backend.entries(name).sort(byKey);
  return out;
}

/** Writes every state for `keys` deterministically (round `r` gives other values). */
export function fill(backend: KeyedStateBackend, keys: readonly Key[], r = 0): void {
  const s = allStates(backend);
  keys.forEach((key, i) => {
    setKey(backend, key);
    s.value.update(i + r);
    s.list.add(`a${i + r}`);
    if (i % 2 === 0) s.list.add(`b${i}`);
    s.map.put('x', i + r);
    s.map.put(i % 7, i * 2);
    s.reducing.add(i);
    s.reducing.add(1);
    s.aggregating.add(i);
    s.aggregating.add(i + 2 + r);
  });
}

export const keys = (n: number, prefix = 'key'): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Streams kept in a Map: like a storage, with scope and per-checkpoint names, and a reader. */
export class MapStreams {
  readonly files = new Map<string, Uint8Array>();
  readonly writes: Array<{ checkpointId: number; scope: StateScope; name: string; bytes: number }> = [];
  private next = 0;

  factory(id: number): CheckpointStreamFactory {
    return {
      checkpointId: checkpointId(id),
      write: async (scope, nameHint, data) => {
        const path = `memory:t/${scope === 'shared' ? 'shared' : `chk-${id}`}/${nameHint}-${this.next++}`;
        this.files.set(path, data.slice());
        this.writes.push({ checkpointId: id, scope, name: path, bytes: data.byteLength });
        return { type: 'file', path, size: data.byteLength, checksum: 0 } satisfies StreamStateHandle;
      },
    };
  }

  readonly read: StateReader = async (h) => {
    if (h.type === 'inline') return h.data;
    const bytes = this.files.get(h.path);
    if (bytes === undefined) throw new Error(`missing ${h.path}`);
    return bytes;
  };
}

export async function snapshotNow(b: KeyedStateBackend, streams: MapStreams, id: number): Promise<KeyedStateHandle[]> {
  return b.snapshot(checkpointId(id), streams.factory(id)).run();
}

/** One random operation on every state kind, applied to both backends; returns what the reads saw. */
export function randomOp(r: SeededRandom, backends: readonly KeyedStateBackend[], keySpace: number): unknown[] {
  const key = `k${r.int(keySpace)}`;
  const op = r.int(14);
  const arg = r.int(1000);
  return backends.map((b) => {
    setKey(b, key);
    const s = allStates(b);
    switch (op) {
      case 0:
        return s.value.update(arg);
      case 1:
        return s.value.clear();
      case 2:
        return s.list.add(`e${arg}`);
      case 3:
        return s.list.update(arg % 3 === 0 ? [] : [`u${arg}`, `v${arg}`]);
      case 4:
        return s.map.put(arg % 5, arg);
      case 5:
        return s.map.remove(arg % 5);
      case 6:
        return s.reducing.add(arg);
      case 7:
        return s.aggregating.add(arg);
      case 8:
        return s.aggregating.clear();
      case 9:
        return [s.value.value(), [...s.list.get()]];
      case 10:
        return [[...s.map.entries()], s.map.isEmpty(), s.map.contains(arg % 5)];
      case 11:
        return [s.reducing.get(), s.aggregating.get()];
      case 12:
        return s.map.clear();
      default:
        return s.list.addAll([`a${arg}`, `b${arg}`]);
    }
  });
}
