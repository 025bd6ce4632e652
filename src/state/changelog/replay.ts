/**
 * Replaying a changelog over a restored materialization, for one key-group range: entries of
 * (state, key) pairs the log touches are held back while the materialization is applied, the log's
 * changes are folded over them in sequence order, and the results go to the restore sink. Keys
 * the log never touches pass straight through, so replay costs memory in the size of the log, not
 * of the state.
 */
import { StorageError } from '../../core/errors.ts';
import type { StateKind } from '../descriptors.ts';
import type { KeyedRestoreSink } from '../formats/keyed-file-reader.ts';
import type { Key } from '../key-groups.ts';
import type { StateChange } from './log-format.ts';

/** The value of (state, key) after `change`, from `current` (undefined: absent). Pure. */
export function applyChange(current: unknown, change: StateChange, label: string): unknown {
  switch (change.op) {
    case 'set':
      return change.value;
    case 'clear':
      return undefined;
    case 'append':
      if (current !== undefined && !Array.isArray(current)) throw notA(label, change, 'list');
      return current === undefined ? [change.value] : [...current, change.value];
    case 'mapPut': {
      if (current !== undefined && !(current instanceof Map)) throw notA(label, change, 'map');
      const next = new Map(current as Map<unknown, unknown> | undefined);
      next.set(change.mapKey, change.value);
      return next;
    }
    case 'mapRemove': {
      if (current === undefined) return undefined;
      if (!(current instanceof Map)) throw notA(label, change, 'map');
      const next = new Map(current);
      next.delete(change.mapKey);
      return next.size === 0 ? undefined : next;
    }
  }
}

function notA(label: string, change: StateChange, what: string): StorageError {
  return new StorageError('CORRUPT_FILE', label, `change ${change.seq} (${change.op} on state "${change.state}") applies to a value that is not a ${what}`);
}

/** The log's changes of one key group, by state name, then by key: the final value starts as "not yet seen". */
type Touched = Map<string, { kind: StateKind; byKey: Map<Key, { value: unknown; changes: StateChange[] }> }>;

/** Holds back the materialization's entries of keys the log touches, then applies the log over them. */
export class ReplaySink implements KeyedRestoreSink {
  private readonly byKeyGroup = new Map<number, Touched>();

  constructor(
    private readonly sink: KeyedRestoreSink,
    changes: readonly StateChange[],
    private readonly label: string,
  ) {
    for (const c of changes) {
      let touched = this.byKeyGroup.get(c.keyGroup);
      if (touched === undefined) this.byKeyGroup.set(c.keyGroup, (touched = new Map()));
      let state = touched.get(c.state);
      if (state === undefined) touched.set(c.state, (state = { kind: c.kind, byKey: new Map() }));
      let entry = state.byKey.get(c.key);
      if (entry === undefined) state.byKey.set(c.key, (entry = { value: undefined, changes: [] }));
      entry.changes.push(c);
    }
  }

  private held(name: string, keyGroup: number, key: Key): { value: unknown } | undefined {
    return this.byKeyGroup.get(keyGroup)?.get(name)?.byKey.get(key);
  }

  put(name: string, kind: StateKind, keyGroup: number, key: Key, value: unknown): void {
    const held = this.held(name, keyGroup, key);
    if (held === undefined) this.sink.put(name, kind, keyGroup, key, value);
    else held.value = value;
  }

  remove(name: string, kind: StateKind, keyGroup: number, key: Key): void {
    const held = this.held(name, keyGroup, key);
    if (held === undefined) this.sink.remove(name, kind, keyGroup, key);
    else held.value = undefined;
  }

  endKeyGroup(): void {
    this.sink.endKeyGroup?.();
  }

  /** After the materialization: applies the log of `keyGroup` and ends it. */
  finishKeyGroup(keyGroup: number): void {
    const touched = this.byKeyGroup.get(keyGroup);
    if (touched === undefined) return;
    for (const [name, state] of touched) {
      for (const [key, entry] of state.byKey) {
        let value = entry.value;
        for (const c of entry.changes) value = applyChange(value, c, this.label);
        if (value === undefined) this.sink.remove(name, state.kind, keyGroup, key);
        else this.sink.put(name, state.kind, keyGroup, key, value);
      }
    }
    this.byKeyGroup.delete(keyGroup);
    this.sink.endKeyGroup?.();
  }
}
