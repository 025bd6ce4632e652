/**
 * A window's contents as keyed state: one MapState of the operator, its map keys the window
 * namespaces, so contents are scoped to (key, window) and snapshotted, restored and rescaled by
 * key group like any keyed state. Three layouts, chosen once per operator:
 * - reduce: `ns` -> the reduced value;
 * - aggregate: `ns` -> the accumulator;
 * - list (process functions, evictors): `ns` -> element count n, `ns#i` -> `[value, timestampMs]`
 *   for i < n, so adding an element writes two entries instead of copying a growing array.
 */
import { assert } from '../../core/assert.ts';
import type { AggregateFunction } from '../../state/descriptors.ts';
import type { MapState } from '../../state/state.ts';
import type { TimestampedValue } from './evictors.ts';

/** How a window operator keeps contents. */
export type ContentsLayout =
  | { readonly kind: 'reduce'; readonly reduce: (a: unknown, b: unknown) => unknown }
  | { readonly kind: 'aggregate'; readonly aggregate: AggregateFunction<unknown, unknown, unknown> }
  | { readonly kind: 'list' };

/** The persisted form of one list element. */
type StoredElement = readonly [value: unknown, timestampMs: number];

export class WindowContents {
  constructor(
    private readonly map: MapState<string, unknown>,
    readonly layout: ContentsLayout,
  ) {}

  /** Adds one element to the window `ns` of the current key. */
  add(ns: string, value: unknown, timestampMs: number): void {
    const layout = this.layout;
    switch (layout.kind) {
      case 'reduce': {
        const current = this.map.get(ns);
        this.map.put(ns, current === undefined ? value : layout.reduce(current, value));
        return;
      }
      case 'aggregate': {
        const acc = this.map.get(ns);
        this.map.put(ns, layout.aggregate.add(value, acc === undefined ? layout.aggregate.createAccumulator() : acc));
        return;
      }
      case 'list': {
        const n = (this.map.get(ns) as number | undefined) ?? 0;
        this.map.put(`${ns}#${n}`, [value, timestampMs] satisfies StoredElement);
        this.map.put(ns, n + 1);
        return;
      }
    }
  }

  /** Whether the window `ns` of the current key holds anything. */
  has(ns: string): boolean {
    return this.map.contains(ns);
  }

  /** The reduced value or accumulator of a reduce or aggregate layout (undefined when empty). */
  single(ns: string): unknown {
    assert(this.layout.kind !== 'list', 'single() on list contents');
    return this.map.get(ns);
  }

  /** The elements of a list layout, in the order added. */
  elements(ns: string): TimestampedValue<unknown>[] {
    assert(this.layout.kind === 'list', 'elements() on non-list contents');
    const n = (this.map.get(ns) as number | undefined) ?? 0;
    const out: TimestampedValue<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const stored = this.map.get(`${ns}#${i}`) as StoredElement | undefined;
      assert(stored !== undefined, () => `window contents ${ns}: element ${i} of ${n} missing`);
      out.push({ value: stored[0], timestampMs: stored[1] });
    }
    return out;
  }

  /** Replaces the elements of a list layout (after an evictor); empty clears the window. */
  replaceElements(ns: string, elements: readonly TimestampedValue<unknown>[]): void {
    this.clear(ns);
    for (const e of elements) this.add(ns, e.value, e.timestampMs);
  }

  /** Drops the contents of window `ns` of the current key. */
  clear(ns: string): void {
    if (this.layout.kind === 'list') {
      const n = (this.map.get(ns) as number | undefined) ?? 0;
      for (let i = 0; i < n; i++) this.map.remove(`${ns}#${i}`);
    }
    this.map.remove(ns);
  }

  /** Moves the contents of the windows `sources` into `target` (merging windows), clearing the sources. */
  mergeInto(target: string, sources: readonly string[]): void {
    const layout = this.layout;
    for (const source of sources) {
      if (!this.map.contains(source)) continue;
      switch (layout.kind) {
        case 'reduce': {
          const from = this.map.get(source);
          const to = this.map.get(target);
          this.map.put(target, to === undefined ? from : layout.reduce(to, from));
          break;
        }
        case 'aggregate': {
          const from = this.map.get(source);
          const to = this.map.get(target);
          assert(layout.aggregate.merge !== undefined, 'merging windows need AggregateFunction.merge (checked when the job is defined)');
          this.map.put(target, to === undefined ? from : layout.aggregate.merge(to, from));
          break;
        }
        case 'list':
          for (const e of this.elements(source)) this.add(target, e.value, e.timestampMs);
          break;
      }
      this.clear(source);
    }
  }
}
