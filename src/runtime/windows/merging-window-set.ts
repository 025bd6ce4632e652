/**
 * The merging-window set of one key (session windows): which windows are open, and for each the
 * window under whose namespace its contents are stored (the state window). When windows merge, the
 * merged contents move into the state window of one of them, so merging never copies contents
 * twice. Persisted as keyed state through `toPersisted` / `fromPersisted`.
 */
import { assert } from '../../core/assert.ts';
import type { WindowAssigner } from './assigners.ts';
import { TimeWindow, type Window } from './window.ts';

/** The persisted form: `[start, end, stateStart, stateEnd]` per open window. */
export type PersistedMergingSet = ReadonlyArray<readonly [number, number, number, number]>;

/** Called when windows merge: the result, the windows merged into it, and their state windows. */
export type MergeCallback = (result: TimeWindow, merged: readonly TimeWindow[], stateResult: TimeWindow, mergedStates: readonly TimeWindow[]) => void;

export class MergingWindowSet {
  /** Window namespace -> [window, state window]. */
  private readonly windows = new Map<string, { window: TimeWindow; state: TimeWindow }>();
  private changed = false;

  private constructor(private readonly assigner: WindowAssigner<unknown, Window>) {
    assert(assigner.isMerging && assigner.mergeWindows, `${assigner} is not a merging assigner`);
  }

  static fromPersisted(assigner: WindowAssigner<unknown, Window>, persisted: PersistedMergingSet | undefined): MergingWindowSet {
    const set = new MergingWindowSet(assigner);
    for (const [start, end, stateStart, stateEnd] of persisted ?? []) {
      set.windows.set(`${start}:${end}`, { window: new TimeWindow(start, end), state: new TimeWindow(stateStart, stateEnd) });
    }
    return set;
  }

  /** Whether `addWindow` or `retireWindow` changed the set since it was loaded. */
  get isChanged(): boolean {
    return this.changed;
  }

  get size(): number {
    return this.windows.size;
  }

  toPersisted(): PersistedMergingSet {
    return [...this.windows.values()].map(({ window, state }) => [window.start, window.end, state.start, state.end] as const);
  }

  /** The window whose namespace holds the contents of `window`, or undefined when it is not open. */
  getStateWindow(window: TimeWindow): TimeWindow | undefined {
    return this.windows.get(`${window.start}:${window.end}`)?.state;
  }

  /** Removes a window (fired and purged, cleaned up, or late). */
  retireWindow(window: TimeWindow): void {
    const removed = this.windows.delete(`${window.start}:${window.end}`);
    assert(removed, () => `window ${window} is not in the merging set`);
    this.changed = true;
  }

  /**
   * Adds `newWindow` and merges it with the open windows it overlaps. Returns the window that now
   * contains it (itself or a merge result). `onMerge` is called for a merge that involves at least
   * one window already open (a new window merging alone is just added).
   */
  addWindow(newWindow: TimeWindow, onMerge: MergeCallback): TimeWindow {
    const all = [...this.windows.values()].map((w) => w.window);
    all.push(newWindow);
    let resultWindow = newWindow;
    let newWindowMerged = false;
    for (const { result, merged } of this.assigner.mergeWindows!(all) as Array<{ result: TimeWindow; merged: readonly TimeWindow[] }>) {
      const containsNew = merged.includes(newWindow);
      if (containsNew) {
        newWindowMerged = true;
        resultWindow = result;
      }
      // The state window of the result: that of the first merged window that was open already.
      const openMembers = merged.filter((w) => w !== newWindow && this.windows.has(`${w.start}:${w.end}`));
      if (openMembers.length === 0) continue;
      const keep = this.windows.get(`${openMembers[0]!.start}:${openMembers[0]!.end}`)!.state;
      const mergedStates: TimeWindow[] = [];
      for (const w of openMembers) {
        const entry = this.windows.get(`${w.start}:${w.end}`)!;
        this.windows.delete(`${w.start}:${w.end}`);
        if (!entry.state.equals(keep)) mergedStates.push(entry.state);
      }
      this.windows.set(`${result.start}:${result.end}`, { window: result, state: keep });
      this.changed = true;
      // The new window falling inside one open window that does not grow is no merge.
      if (openMembers.length === 1 && openMembers[0]!.equals(result)) continue;
      onMerge(
        result,
        openMembers.filter((w) => !w.equals(result)),
        keep,
        mergedStates,
      );
    }
    if (!newWindowMerged) {
      this.windows.set(`${newWindow.start}:${newWindow.end}`, { window: newWindow, state: newWindow });
      this.changed = true;
    }
    return resultWindow;
  }
}
