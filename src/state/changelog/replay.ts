/**
 * Replaying a changelog over a restored materialization, for one key-group range: entries of
 * (state, key) pairs the log touches are held back while the materialization is applied, the log's
 * changes are folded over them in sequence order, and the results go to the restore sink. Keys
 * the log never touches pass straight through, so replay costs memory in the size of the log, not
 * of the state.
 *
 * Folding is done as the changes are added, as far as it can be without the materialization: a
 * `set` or `clear` makes everything before it for its key irrelevant, so only the newest of them is
 * kept (its value still encoded), with the list and map changes after it. Values are decoded only
 * for the changes that remain, and list and map values are copied once per key, not per change.
 */
import { StorageError } from '../../core/errors.ts';
import type { StateKind } from '../descriptors.ts';
import type { KeyedRestoreSink } from '../formats/keyed-file-reader.ts';
import type { Key } from '../key-groups.ts';
import { changeValue, type LoggedChange } from './log-format.ts';

/** What the log holds for one (state, key): its newest `set`/`clear`, if any, and the changes after it. */
interface Held {
  /** The materialization's value of the key (undefined: absent or not seen); replaced by `reset` when there is one. */
  value: unknown;
  /** The newest `set` or `clear` of the key; null: the changes fold over the materialization's value. */
  reset: LoggedChange | null;
  /** The `append`, `mapPut` and `mapRemove` changes after `reset`, in order; null when there are none. */
  tail: LoggedChange[] | null;
}

/** The log's changes of one key group, by state name, then by key. */
type Touched = Map<string, { kind: StateKind; byKey: Map<Key, Held> }>;

/** Holds back the materialization's entries of keys the log touches, then applies the log over them. */
export class ReplaySink implements KeyedRestoreSink {
  private readonly byKeyGroup = new Map<number, Touched>();

  constructor(
    private readonly sink: KeyedRestoreSink,
    private readonly label: string,
  ) {}

  /** Adds the next change of the log (in sequence order); call before the materialization is applied. */
  add(c: LoggedChange): void {
    let touched = this.byKeyGroup.get(c.keyGroup);
    if (touched === undefined) this.byKeyGroup.set(c.keyGroup, (touched = new Map()));
    let state = touched.get(c.state);
    if (state === undefined) touched.set(c.state, (state = { kind: c.kind, byKey: new Map() }));
    const held = state.byKey.get(c.key);
    const resets = c.op === 'set' || c.op === 'clear';
    if (held === undefined) state.byKey.set(c.key, { value: undefined, reset: resets ? c : null, tail: resets ? null : [c] });
    else if (resets) {
      held.reset = c;
      held.tail = null;
    } else if (held.tail === null) held.tail = [c];
    else held.tail.push(c);
  }

  private held(name: string, keyGroup: number, key: Key): Held | undefined {
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
      for (const [key, held] of state.byKey) {
        const value = this.fold(held);
        if (value === undefined) this.sink.remove(name, state.kind, keyGroup, key);
        else this.sink.put(name, state.kind, keyGroup, key, value);
      }
    }
    this.byKeyGroup.delete(keyGroup);
    this.sink.endKeyGroup?.();
  }

  /** The key's value after the log. */
  private fold(held: Held): unknown {
    let value = held.reset === null ? held.value : this.valueOf(held.reset);
    if (held.tail === null) return value;
    // A value decoded from the log is this replay's own; the materialization's may be shared, so it is
    // copied once before the first change, then changed in place.
    let own = held.reset !== null;
    for (const c of held.tail) {
      if (c.op === 'append') {
        if (value !== undefined && !Array.isArray(value)) throw this.notA(c, 'list');
        if (value === undefined) value = [];
        else if (!own) value = [...(value as unknown[])];
        own = true;
        (value as unknown[]).push(this.valueOf(c));
      } else if (c.op === 'mapPut') {
        if (value !== undefined && !(value instanceof Map)) throw this.notA(c, 'map');
        if (value === undefined || !own) value = new Map(value as Map<unknown, unknown> | undefined);
        own = true;
        (value as Map<unknown, unknown>).set(c.mapKey, this.valueOf(c));
      } else {
        // mapRemove (set and clear are never in the tail)
        if (value === undefined) continue;
        if (!(value instanceof Map)) throw this.notA(c, 'map');
        if (!own) value = new Map(value);
        own = true;
        (value as Map<unknown, unknown>).delete(c.mapKey);
        if ((value as Map<unknown, unknown>).size === 0) {
          value = undefined;
          own = false;
        }
      }
    }
    return value;
  }

  private valueOf(c: LoggedChange): unknown {
    try {
      return changeValue(c);
    } catch (err) {
      throw new StorageError(
        'CORRUPT_FILE',
        this.label,
        `change ${c.seq} (${c.op} on state "${c.state}"): its value does not decode: ${(err as Error).message}`,
      );
    }
  }

  private notA(c: LoggedChange, what: string): StorageError {
    return new StorageError('CORRUPT_FILE', this.label, `change ${c.seq} (${c.op} on state "${c.state}") applies to a value that is not a ${what}`);
  }
}
