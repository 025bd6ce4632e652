/**
 * The merging-window set of one key (session windows): which windows are open, and for each the
 * window under whose namespace its contents are stored (the state window). When windows merge, the
 * merged contents move into the state window of one of them, so merging never copies contents
 * twice. Persisted as keyed state through `toPersisted` / `fromPersisted`; `MergingWindowSets`
 * keeps the sets in working form between the elements of a key, so a set is rebuilt only when its
 * state value is not the one this operator last wrote (after a restore, or read back from disk by
 * the embedded backend).
 */
import { assert } from '../../core/assert.ts';
import type { Key } from '../../state/key-groups.ts';
import type { WindowAssigner } from './assigners.ts';
import { mergeTimeWindows, TimeWindow, type Window } from './window.ts';

/** The one window `addToOne` merged away, in an array reused per call (`onMerge` reads it during the call only). */
const ONE_MERGED: TimeWindow[] = [];
/** No state windows merged away. */
const NO_WINDOWS: readonly TimeWindow[] = [];

/** The persisted form: `[start, end, stateStart, stateEnd]` per open window. */
export type PersistedMergingSet = ReadonlyArray<readonly [number, number, number, number]>;

/** Called when windows merge: the result, the windows merged into it, and their state windows. */
export type MergeCallback = (result: TimeWindow, merged: readonly TimeWindow[], stateResult: TimeWindow, mergedStates: readonly TimeWindow[]) => void;

export class MergingWindowSet {
  /**
   * The open windows in the order they were added (the persisted order) and, at the same index,
   * their state windows. A key has few open windows (a session or two), so a scan with numeric
   * comparisons beats a map keyed by strings built per lookup.
   */
  private readonly windows: TimeWindow[] = [];
  private readonly states: TimeWindow[] = [];
  private changed = false;
  /** @internal The state value this set was read from or last saved as (MergingWindowSets). */
  savedAs: PersistedMergingSet | undefined = undefined;

  /** Whether the assigner merges as session windows do (`mergeTimeWindows`), which `addToOne` reproduces. */
  private readonly sessions: boolean;

  private constructor(private readonly assigner: WindowAssigner<unknown, Window>) {
    assert(assigner.isMerging && assigner.mergeWindows, `${assigner} is not a merging assigner`);
    this.sessions = assigner.mergeWindows === mergeTimeWindows;
  }

  static fromPersisted(assigner: WindowAssigner<unknown, Window>, persisted: PersistedMergingSet | undefined): MergingWindowSet {
    const set = new MergingWindowSet(assigner);
    for (const [start, end, stateStart, stateEnd] of persisted ?? []) {
      const window = new TimeWindow(start, end);
      set.put(window, stateStart === start && stateEnd === end ? window : new TimeWindow(stateStart, stateEnd));
    }
    return set;
  }

  /** Whether `addWindow` or `retireWindow` changed the set since it was loaded. */
  get isChanged(): boolean {
    return this.changed;
  }

  get size(): number {
    return this.windows.length;
  }

  toPersisted(): PersistedMergingSet {
    const out: Array<readonly [number, number, number, number]> = new Array(this.windows.length);
    for (let i = 0; i < this.windows.length; i++) {
      const w = this.windows[i]!;
      const s = this.states[i]!;
      out[i] = [w.start, w.end, s.start, s.end] as const;
    }
    return out;
  }

  /** The window whose namespace holds the contents of `window`, or undefined when it is not open. */
  getStateWindow(window: TimeWindow): TimeWindow | undefined {
    const i = this.indexOf(window.start, window.end);
    return i < 0 ? undefined : this.states[i];
  }

  /** Removes a window (fired and purged, cleaned up, or late). */
  retireWindow(window: TimeWindow): void {
    const i = this.indexOf(window.start, window.end);
    assert(i >= 0, () => `window ${window} is not in the merging set`);
    this.removeAt(i);
    this.changed = true;
  }

  /**
   * Adds `newWindow` and merges it with the open windows it overlaps. Returns the window that now
   * contains it (itself or a merge result). `onMerge` is called for a merge that involves at least
   * one window already open (a new window merging alone is just added).
   */
  addWindow(newWindow: TimeWindow, onMerge: MergeCallback): TimeWindow {
    if (this.windows.length <= 1 && this.sessions) return this.addToOne(newWindow, onMerge);
    const all = this.windows.slice();
    all.push(newWindow);
    let resultWindow = newWindow;
    let newWindowMerged = false;
    for (const group of this.assigner.mergeWindows!(all) as Array<{ result: TimeWindow; merged: readonly TimeWindow[] }>) {
      const merged = group.merged;
      let result = group.result;
      // The open members, in the order the assigner gave them; the new window is not open yet.
      const openMembers: TimeWindow[] = [];
      let containsNew = false;
      for (const w of merged) {
        if (w === newWindow) containsNew = true;
        else if (this.indexOf(w.start, w.end) >= 0) openMembers.push(w);
      }
      // A result equal to an open window is that window: its namespace is computed already.
      for (const w of openMembers) if (w.start === result.start && w.end === result.end) result = w;
      if (containsNew) {
        newWindowMerged = true;
        resultWindow = result;
      }
      if (openMembers.length === 0) continue;
      // The state window of the result: that of the first merged window that was open already.
      const keep = this.states[this.indexOf(openMembers[0]!.start, openMembers[0]!.end)]!;
      const mergedStates: TimeWindow[] = [];
      for (const w of openMembers) {
        const i = this.indexOf(w.start, w.end);
        const state = this.states[i]!;
        this.removeAt(i);
        if (!state.equals(keep)) mergedStates.push(state);
      }
      this.windows.push(result);
      this.states.push(keep);
      this.changed = true;
      // The new window falling inside one open window that does not grow is no merge.
      if (openMembers.length === 1 && openMembers[0] === result) continue;
      // An open member equal to the result is the result itself (see above), and is not merged away.
      const mergedAway = openMembers.includes(result) ? openMembers.filter((w) => w !== result) : openMembers;
      onMerge(result, mergedAway, keep, mergedStates);
    }
    if (!newWindowMerged) {
      this.put(newWindow, newWindow);
      this.changed = true;
    }
    return resultWindow;
  }

  /**
   * `addWindow` for session windows (`mergeTimeWindows`) when at most one window is open: a key's
   * one session and its next element, the common case. The same outcome as the general path (the
   * result window, the state window kept, `onMerge`'s arguments, the set marked changed), without
   * its arrays: measured on Nexmark q11, the general path allocated about half of the operator's
   * bytes per element.
   */
  private addToOne(newWindow: TimeWindow, onMerge: MergeCallback): TimeWindow {
    this.changed = true;
    const open = this.windows[0];
    if (open === undefined || !open.intersects(newWindow)) {
      this.windows.push(newWindow);
      this.states.push(newWindow);
      return newWindow;
    }
    // `mergeTimeWindows` covers the earlier window by the later; an equal window is the open one.
    const result = open.cover(newWindow);
    if (result === open) return open; // inside the open window, which does not grow: no merge
    this.windows[0] = result;
    ONE_MERGED[0] = open;
    onMerge(result, ONE_MERGED, this.states[0]!, NO_WINDOWS);
    ONE_MERGED.length = 0;
    return result;
  }

  /** Forgets the changes so far: the caller saved the set (or is about to reuse it as saved). */
  markSaved(): void {
    this.changed = false;
  }

  private indexOf(start: number, end: number): number {
    const windows = this.windows;
    for (let i = 0; i < windows.length; i++) {
      const w = windows[i]!;
      if (w.start === start && w.end === end) return i;
    }
    return -1;
  }

  /** Sets the state window of `window`, appending it when it is not open (a map's `set`). */
  private put(window: TimeWindow, state: TimeWindow): void {
    const i = this.indexOf(window.start, window.end);
    if (i < 0) {
      this.windows.push(window);
      this.states.push(state);
    } else {
      this.windows[i] = window;
      this.states[i] = state;
    }
  }

  private removeAt(i: number): void {
    this.windows.splice(i, 1);
    this.states.splice(i, 1);
  }
}

/** Keys whose sets `MergingWindowSets` keeps at most before it starts afresh. */
const KEPT_SETS_MAX = 65_536;

/**
 * The merging-window sets of an operator's keys in working form, each with the state value it was
 * read from or saved as: while the backend hands back that same object (the heap backend; the
 * embedded backend while the key is in its cache), the next element or timer of the key reuses the
 * set instead of rebuilding it; any other value (restored, read back from disk) is parsed as
 * before. Bounded: emptied when it holds KEPT_SETS_MAX keys.
 */
export class MergingWindowSets {
  private readonly byKey = new Map<Key, MergingWindowSet>();

  constructor(private readonly assigner: WindowAssigner<unknown, Window>) {}

  /** The set that `persisted`, the state value of `key` (none: an empty set), holds. */
  load(key: Key, persisted: PersistedMergingSet | undefined): MergingWindowSet {
    const cached = this.byKey.get(key);
    if (cached !== undefined && persisted !== undefined && cached.savedAs === persisted) {
      assert(!cached.isChanged, 'a merging-window set was changed and not saved');
      return cached;
    }
    const set = MergingWindowSet.fromPersisted(this.assigner, persisted);
    set.savedAs = persisted;
    if (cached === undefined && this.byKey.size >= KEPT_SETS_MAX) this.byKey.clear();
    this.byKey.set(key, set);
    return set;
  }

  /** The state value of `key` for its changed set (undefined: the set is empty, clear the state). */
  save(key: Key, set: MergingWindowSet): PersistedMergingSet | undefined {
    set.markSaved();
    if (set.size === 0) {
      set.savedAs = undefined;
      this.byKey.delete(key);
      return undefined;
    }
    set.savedAs = set.toPersisted();
    return set.savedAs;
  }
}
