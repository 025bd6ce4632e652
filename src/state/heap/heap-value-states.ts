/**
 * Heap keyed states holding one value per key: value, reducing and aggregating state. Each is one
 * object per descriptor acting on the backend's current key; the record path allocates nothing
 * beyond what the group map itself does.
 */
import type { AggregateFunction } from '../descriptors.ts';
import type { AggregatingState, ReducingState, ValueState } from '../state.ts';
import type { KeyContext } from './key-context.ts';
import type { StateTable } from './state-table.ts';

/** Removes the current key from `table` and reports it; a no-op when the key has no value. */
export function clearCurrentKey(ctx: KeyContext, table: StateTable): void {
  const map = table.groups[ctx.index];
  if (map === undefined || !map.has(ctx.key)) return;
  table.writable(ctx.index).delete(ctx.key);
  if (ctx.listener !== null) ctx.listener.onChange(table.name, ctx.keyGroup, ctx.key, 'clear', undefined);
}

function setCurrentKey(ctx: KeyContext, table: StateTable, value: unknown): void {
  table.writable(ctx.index).set(ctx.key, value);
  if (ctx.listener !== null) ctx.listener.onChange(table.name, ctx.keyGroup, ctx.key, 'set', value);
}

/**
 * Stores a value a user function produced from `current` (the stored value, passed through
 * `protect`); it was made after the latest snapshot, so it is owned. A result that is the stored
 * value itself (an accumulator mutated in place and returned, a reduce that kept the old value) is
 * stored under the key already: storing it again would change nothing, so the second map lookup is
 * skipped. In-place mutation never reaches a snapshot's view: `protect` hands out a copy then.
 */
function storeResult(ctx: KeyContext, table: StateTable, current: unknown, value: unknown): void {
  if (value === undefined) {
    clearCurrentKey(ctx, table);
    return;
  }
  if (value === current) {
    if (ctx.listener !== null) ctx.listener.onChange(table.name, ctx.keyGroup, ctx.key, 'set', value);
    return;
  }
  if (typeof value === 'object' && value !== null) ctx.own(value);
  setCurrentKey(ctx, table, value);
}

function currentValue(ctx: KeyContext, table: StateTable): unknown {
  const map = table.groups[ctx.index];
  return map === undefined ? undefined : map.get(ctx.key);
}

/** Value state; `update(undefined)` clears, and an absent key reads as the descriptor's default. */
export class HeapValueState implements ValueState<unknown> {
  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
    private readonly defaultValue: unknown,
  ) {}

  value(): unknown {
    const v = currentValue(this.ctx, this.table);
    return v === undefined ? this.defaultValue : v;
  }

  update(value: unknown): void {
    if (value === undefined) clearCurrentKey(this.ctx, this.table);
    else setCurrentKey(this.ctx, this.table, value);
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
  }
}

/** Reducing state: `add` folds the value into the stored one with the descriptor's function. */
export class HeapReducingState implements ReducingState<unknown> {
  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
    private readonly reduce: (a: unknown, b: unknown) => unknown,
  ) {}

  get(): unknown {
    return currentValue(this.ctx, this.table);
  }

  add(value: unknown): void {
    const current = currentValue(this.ctx, this.table);
    const next = current === undefined ? value : this.reduce(this.ctx.protect(current), value);
    storeResult(this.ctx, this.table, current, next);
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
  }
}

/** Aggregating state: stores the accumulator; `get` reads the result out of it. */
export class HeapAggregatingState implements AggregatingState<unknown, unknown> {
  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
    private readonly aggregate: AggregateFunction<unknown, unknown, unknown>,
  ) {}

  get(): unknown {
    const acc = currentValue(this.ctx, this.table);
    return acc === undefined ? undefined : this.aggregate.getResult(acc);
  }

  add(value: unknown): void {
    const current = currentValue(this.ctx, this.table);
    // Accumulators are often mutated in place by `add`; protect() keeps a live snapshot's copy intact.
    const acc = current === undefined ? this.aggregate.createAccumulator() : this.ctx.protect(current);
    storeResult(this.ctx, this.table, current, this.aggregate.add(value, acc));
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
  }
}
