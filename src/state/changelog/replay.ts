/**
 * Replaying a changelog over a restored materialization, for one key-group range: the log's changes
 * are gathered by (state, key) first; then, as the materialization's entries arrive, an entry whose
 * key the log touches has the log's changes folded over it and goes to the restore sink in its
 * place, in the materialization's order (a sorted store takes it in the same pass as the rest:
 * applying the log's keys after the materialization, in the log's order, took as long as the
 * materialization itself at 1 M keys). Keys the log touches that the materialization lacks go to
 * the sink when their key group ends. Keys the log never touches pass straight through, so replay
 * costs memory in the size of the log, not of the state.
 *
 * A materialization of base and increments may hand over a key more than once (the last wins, as
 * in the sink): folding is a pure function of the value handed over, so each is folded and passed
 * on, and the sink keeps the last.
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
  /** Whether the materialization handed the key over (its folded value then went to the sink). */
  applied: boolean;
  /** The newest `set` or `clear` of the key; null: the changes fold over the materialization's value. */
  reset: LoggedChange | null;
  /** The `append`, `mapPut` and `mapRemove` changes after `reset`, in order; null when there are none. */
  tail: LoggedChange[] | null;
}

/** The log's changes of one key group, by state name, then by key. */
type Touched = Map<string, { kind: StateKind; byKey: Map<Key, Held> }>;

/** Applies the log over the materialization's entries of keys it touches, as they pass. */
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
    if (held === undefined) state.byKey.set(c.key, { applied: false, reset: resets ? c : null, tail: resets ? null : [c] });
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
    else this.apply(held, name, kind, keyGroup, key, value);
  }

  remove(name: string, kind: StateKind, keyGroup: number, key: Key): void {
    const held = this.held(name, keyGroup, key);
    if (held === undefined) this.sink.remove(name, kind, keyGroup, key);
    else this.apply(held, name, kind, keyGroup, key, undefined);
  }

  /** Folds the log over `value` (the materialization's, undefined: absent) and hands the result to the sink. */
  private apply(held: Held, name: string, kind: StateKind, keyGroup: number, key: Key, value: unknown): void {
    held.applied = true;
    const reset = held.reset;
    if (reset !== null && held.tail === null && reset.op === 'set' && kind !== 'map' && this.sink.putEncoded !== undefined) {
      // The newest change sets the whole value: the sink stores it as the log holds it (a third of a
      // 1 M-key replay went to decoding such values and encoding them again).
      this.sink.putEncoded(name, kind, keyGroup, key, reset.body.subarray(reset.valueAt, reset.valueAt + reset.valueLength));
      return;
    }
    const folded = this.fold(held, value);
    if (folded === undefined) this.sink.remove(name, kind, keyGroup, key);
    else this.sink.put(name, kind, keyGroup, key, folded);
  }

  endKeyGroup(): void {
    this.sink.endKeyGroup?.();
  }

  /** After the materialization: applies the log to the keys of `keyGroup` it did not hand over, and ends the group. */
  finishKeyGroup(keyGroup: number): void {
    const touched = this.byKeyGroup.get(keyGroup);
    if (touched === undefined) return;
    for (const [name, state] of touched) {
      for (const [key, held] of state.byKey) if (!held.applied) this.apply(held, name, state.kind, keyGroup, key, undefined);
    }
    this.byKeyGroup.delete(keyGroup);
    this.sink.endKeyGroup?.();
  }

  /** The key's value after the log, over `materialized` (not changed: it may be shared). */
  private fold(held: Held, materialized: unknown): unknown {
    let value = held.reset === null ? materialized : this.valueOf(held.reset);
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
