/**
 * Joins in time. A window join pairs the records of two streams that have the same key and fall in
 * the same window (`a.join(b).where(ka).equalTo(kb).window(assigner).apply(fn)`); an interval join
 * pairs each record of a keyed stream with the other keyed stream's records of the same key whose
 * time lies within an interval around it (`a.intervalJoin(b).between(lowerMs, upperMs).process(fn)`).
 */
import { JobDefinitionError } from '../core/errors.ts';
import { IntervalJoinOperator, type ProcessJoinFunction } from '../runtime/joins/interval-join.ts';
import type { WindowAssigner } from '../runtime/windows/assigners.ts';
import type { Window } from '../runtime/windows/window.ts';
import type { Key } from '../state/key-groups.ts';
import type { DataStream, KeyedStream } from './data-stream.ts';

/** A record of either side of a window join, as the window keeps it. */
interface Tagged {
  /** 0: left, 1: right. */
  readonly s: 0 | 1;
  readonly k: Key;
  readonly v: unknown;
}

/** Two streams to join: name the left key with `where`. */
export class JoinedStreams<A, B> {
  /** @internal */
  constructor(
    private readonly left: DataStream<A>,
    private readonly right: DataStream<B>,
  ) {}

  /** The left stream's key (same rules as `keyBy`). */
  where<K extends Key>(leftKey: (a: A) => K): JoinedStreamsWhere<A, B, K> {
    return new JoinedStreamsWhere(this.left, this.right, leftKey);
  }
}

/** Two streams to join with the left key: name the right key with `equalTo`. */
export class JoinedStreamsWhere<A, B, K extends Key> {
  /** @internal */
  constructor(
    private readonly left: DataStream<A>,
    private readonly right: DataStream<B>,
    private readonly leftKey: (a: A) => K,
  ) {}

  /** The right stream's key: records pair up when it equals the left record's key. */
  equalTo(rightKey: (b: B) => K): JoinedStreamsWithKeys<A, B, K> {
    return new JoinedStreamsWithKeys(this.left, this.right, this.leftKey, rightKey);
  }
}

/** Two streams with their keys: choose the windows with `window`. */
export class JoinedStreamsWithKeys<A, B, K extends Key> {
  /** @internal */
  constructor(
    private readonly left: DataStream<A>,
    private readonly right: DataStream<B>,
    private readonly leftKey: (a: A) => K,
    private readonly rightKey: (b: B) => K,
  ) {}

  /** The windows in which records pair up (any assigner; sessions merge across both sides). */
  window<W extends Window>(assigner: WindowAssigner<unknown, W>): WindowJoin<A, B, K, W> {
    return new WindowJoin(this.left, this.right, this.leftKey, this.rightKey, assigner);
  }
}

/** A window join ready to apply its join function. */
export class WindowJoin<A, B, K extends Key, W extends Window> {
  /** @internal */
  constructor(
    private readonly left: DataStream<A>,
    private readonly right: DataStream<B>,
    private readonly leftKey: (a: A) => K,
    private readonly rightKey: (b: B) => K,
    private readonly assigner: WindowAssigner<unknown, W>,
  ) {}

  /**
   * Calls `join` for every pair of a left and a right record with the same key in the same window,
   * when the window fires (the window's last millisecond is the pair's time). A key with records
   * on one side only in a window gives nothing (an inner join).
   */
  apply<R>(join: (left: A, right: B) => R): DataStream<R> {
    const leftKey = this.leftKey;
    const rightKey = this.rightKey;
    const lefts = this.left.map((v): Tagged => ({ s: 0, k: leftKey(v), v })).name('join-left');
    const rights = this.right.map((v): Tagged => ({ s: 1, k: rightKey(v), v })).name('join-right');
    return lefts
      .union(rights)
      .keyBy((t) => t.k as K)
      .window(this.assigner as WindowAssigner<Tagged, W>)
      .process<R>(() => ({
        process(_key, _ctx, elements, out) {
          for (const l of elements) {
            if (l.s !== 0) continue;
            for (const r of elements) if (r.s === 1) out.collect(join(l.v as A, r.v as B));
          }
        },
      }))
      .name('window-join');
  }
}

/** An interval join being defined: give its bounds with `between`. */
export class IntervalJoin<A, B, K extends Key> {
  /** @internal */
  constructor(
    private readonly left: KeyedStream<A, K>,
    private readonly right: KeyedStream<B, K>,
  ) {}

  /**
   * Joins a left record at time t with the right records of its key at times in
   * `[t + lowerMs, t + upperMs]` (bounds inclusive; negative bounds look back in time).
   * @throws JobDefinitionError when a bound is not an integer or `lowerMs > upperMs`.
   */
  between(lowerMs: number, upperMs: number): IntervalJoined<A, B, K> {
    if (!Number.isInteger(lowerMs) || !Number.isInteger(upperMs) || lowerMs > upperMs) {
      throw new JobDefinitionError(`intervalJoin.between: bounds must be integers of milliseconds with lowerMs <= upperMs, got [${lowerMs}, ${upperMs}]`);
    }
    return new IntervalJoined(this.left, this.right, lowerMs, upperMs);
  }
}

/** An interval join with its bounds: end it with `process`. */
export class IntervalJoined<A, B, K extends Key> {
  /** @internal */
  constructor(
    private readonly left: KeyedStream<A, K>,
    private readonly right: KeyedStream<B, K>,
    private readonly lowerMs: number,
    private readonly upperMs: number,
  ) {}

  /**
   * Calls the function for every joined pair; `create` is called once per subtask and attempt.
   * Both inputs need event time (timestamps and watermarks); records behind the watermark are dropped.
   */
  process<R>(create: () => ProcessJoinFunction<A, B, R>): DataStream<R> {
    const selectors = [this.left.keySelector as (r: unknown) => Key, this.right.keySelector as (r: unknown) => Key] as const;
    const spec = {
      lowerMs: this.lowerMs,
      upperMs: this.upperMs,
      keySelectors: selectors,
      createFunction: create as () => ProcessJoinFunction<unknown, unknown, unknown>,
    };
    return this.left.twoInputKeyedOperator<R>('interval-join', this.right, () => new IntervalJoinOperator(spec));
  }
}
