/**
 * DataStream, KeyedStream and ConnectedStreams: the fluent API that builds the logical graph.
 * `uid`, `name` and `setParallelism` apply to the operator that produced the stream.
 */
import { JobDefinitionError } from '../core/errors.ts';
import type { LogicalGraph, LogicalNode, StreamRef } from '../graph/transformation.ts';
import type { CoProcessFunction, Collector, KeyedCoProcessFunction, KeyedProcessFunction, ProcessFunction, RuntimeContext } from '../runtime/functions.ts';
import { FilterOperator, FlatMapOperator, MapOperator } from '../runtime/operators/simple.ts';
import { ProcessOperator } from '../runtime/operators/process.ts';
import { PlainSinkOperator, TwoPhaseCommitSinkOperator } from '../runtime/operators/sink-operators.ts';
import type { StreamOperator } from '../runtime/operator.ts';
import type { OutputTag } from '../runtime/output-tag.ts';
import { GlobalWindows, type WindowAssigner } from '../runtime/windows/assigners.ts';
import { CountEvictor } from '../runtime/windows/evictors.ts';
import { CountTrigger, PurgingTrigger } from '../runtime/windows/triggers.ts';
import type { GlobalWindow, Window } from '../runtime/windows/window.ts';
import { IntervalJoin, JoinedStreams } from './joins.ts';
import { WindowedStream } from './windowed-stream.ts';
import type { PartitionerSpec } from '../runtime/partitioner.ts';
import type { Sink, TwoPhaseCommitSink } from '../runtime/sink.ts';
import { ValueStateDescriptor } from '../state/descriptors.ts';
import type { Key } from '../state/key-groups.ts';
import { TimestampsAndWatermarksOperator } from '../runtime/operators/timestamps-and-watermarks.ts';
import { WatermarkStrategy } from '../runtime/time/watermark-strategy.ts';
import type { ValueState } from '../state/state.ts';

/** Settings shared by every stream that ends in an operator node. */
class OperatorHandle {
  constructor(
    protected readonly graph: LogicalGraph,
    protected readonly node: LogicalNode | null,
  ) {}

  protected target(what: string): LogicalNode {
    if (!this.node) throw new JobDefinitionError(`${what} applies to an operator; this stream is a union or a repartitioning`);
    return this.node;
  }

  /**
   * Stable id that maps this operator's state across restarts, upgrades and rescaling: give one to
   * every operator that keeps state.
   * @throws JobDefinitionError when it is empty, or the stream is a union or repartitioning.
   */
  uid(uid: string): this {
    if (typeof uid !== 'string' || uid.length === 0) throw new JobDefinitionError(`uid must be a non-empty string, got ${JSON.stringify(uid)}`);
    const node = this.target('uid()');
    node.uid = uid;
    node.uidSet = true;
    return this;
  }

  /** Display name of this operator in events, metrics and the CLI (default: the kind of operator, e.g. `map`). */
  name(name: string): this {
    this.target('name()').name = name;
    return this;
  }

  /**
   * Subtasks of this operator (default: the environment's `parallelism`).
   * @throws JobDefinitionError when it is not an integer >= 1, or the stream is a union or repartitioning.
   */
  setParallelism(parallelism: number): this {
    if (!Number.isInteger(parallelism) || parallelism < 1) throw new JobDefinitionError(`setParallelism: must be an integer >= 1, got ${parallelism}`);
    this.target('setParallelism()').parallelism = parallelism;
    return this;
  }

  /** Runs this operator in its own task instead of chained into its upstream's (records then cross a channel). */
  disableChaining(): this {
    this.target('disableChaining()').chainable = false;
    return this;
  }
}

/** The end of a stream: the sink operator `sinkTo` or `print` added, to set its uid, name and parallelism. */
export class DataStreamSink extends OperatorHandle {
  /** @internal */
  constructor(graph: LogicalGraph, node: LogicalNode) {
    super(graph, node);
  }
}

/**
 * A stream of records of type `T` in a job being defined. Each method adds an operator (or a
 * repartitioning) and returns the stream it produces; nothing runs until the environment executes.
 * Functions passed in run in the subtasks, so they must not rely on state outside them: keep state
 * in keyed state (`keyBy(...).process(...)`) to have it checkpointed.
 */
export class DataStream<T> extends OperatorHandle {
  /** @internal */
  constructor(
    graph: LogicalGraph,
    /** @internal */
    readonly refs: readonly StreamRef[],
    node: LogicalNode | null,
  ) {
    super(graph, node);
  }

  private apply<R>(
    name: string,
    createOperator: () => import('../runtime/operator.ts').StreamOperator,
    keySelector: ((r: any) => Key) | null = null,
  ): DataStream<R> {
    const node = this.graph.add({ kind: 'operator', name, inputs: [this.refs], keySelectors: [keySelector], createOperator });
    return new DataStream<R>(this.graph, [{ node, partitioner: null }], node);
  }

  /** One output record per input record. */
  map<R>(fn: (value: T) => R): DataStream<R> {
    return this.apply('map', () => new MapOperator(fn));
  }

  /** Keeps the records for which `fn` returns true. */
  filter(fn: (value: T) => boolean): DataStream<T> {
    return this.apply('filter', () => new FilterOperator(fn));
  }

  /** Zero or more output records per input record, emitted through `out.collect`. */
  flatMap<R>(fn: (value: T, out: Collector<R>) => void): DataStream<R> {
    return this.apply('flatMap', () => new FlatMapOperator(fn));
  }

  /**
   * A process function (open/close, operator state through its context). `create` is called once per
   * subtask and attempt, so each gets its own function object.
   */
  process<R>(create: () => ProcessFunction<T, R>): DataStream<R> {
    return this.apply('process', () => new ProcessOperator(create(), [null]));
  }

  /**
   * Partitions the stream by key: every record with the same key goes to the same subtask, whose
   * keyed state is per key. `keySelector` must return the same key for the same record in every
   * process (a string, number, boolean or bigint).
   */
  keyBy<K extends Key>(keySelector: (value: T) => K): KeyedStream<T, K> {
    return new KeyedStream<T, K>(this.graph, this.partition({ type: 'hash', keySelector }), keySelector);
  }

  /**
   * Gives every record an event time and generates watermarks from here on, with `strategy`
   * (watermarks from upstream are replaced; the maximum one at end of input passes). Periodic
   * watermarks are asked for every `autoWatermarkIntervalMs` (environment option, default 200).
   * One generator per subtask: for watermarks per split of a split source, give the strategy to
   * `fromSource(source, name, { watermarks })` instead.
   */
  assignTimestampsAndWatermarks(strategy: WatermarkStrategy<T>): DataStream<T> {
    if (!(strategy instanceof WatermarkStrategy)) throw new JobDefinitionError('assignTimestampsAndWatermarks needs a WatermarkStrategy');
    return this.apply('timestamps/watermarks', () => new TimestampsAndWatermarksOperator(strategy as WatermarkStrategy<unknown>));
  }

  /** Spreads records round-robin over the next operator's subtasks. */
  rebalance(): DataStream<T> {
    return new DataStream<T>(this.graph, this.partition({ type: 'rebalance' }), null);
  }

  /** Sends every record to every subtask of the next operator. */
  broadcast(): DataStream<T> {
    return new DataStream<T>(this.graph, this.partition({ type: 'broadcast' }), null);
  }

  /** Sends each subtask's records to the next operator's subtask of the same index (same parallelism needed). */
  forward(): DataStream<T> {
    return new DataStream<T>(this.graph, this.partition({ type: 'forward' }), null);
  }

  protected partition(partitioner: PartitionerSpec): StreamRef[] {
    return this.refs.map((r) => ({ ...r, partitioner }));
  }

  /** Merges streams of the same type into one (no order between them). */
  union(...others: DataStream<T>[]): DataStream<T> {
    return new DataStream<T>(this.graph, [...this.refs, ...others.flatMap((o) => o.refs)], null);
  }

  /**
   * The side output `tag` of the operator that produced this stream: the records its functions
   * emitted with `ctx.output(tag, value)` (or its late data, for `sideOutputLateData`).
   * @throws JobDefinitionError when this stream is a union or repartitioning (no single operator).
   */
  getSideOutput<X>(tag: OutputTag<X>): DataStream<X> {
    const node = this.target('getSideOutput()');
    return new DataStream<X>(this.graph, [{ node, partitioner: null, sideOutput: tag.id }], null);
  }

  /**
   * Joins this stream with `other` by key within windows:
   * `a.join(b).where(ka).equalTo(kb).window(assigner).apply((x, y) => ...)`.
   */
  join<U>(other: DataStream<U>): JoinedStreams<T, U> {
    return new JoinedStreams<T, U>(this, other);
  }

  /** Pairs this stream with another, for a two-input `process` function. */
  connect<U>(other: DataStream<U>): ConnectedStreams<T, U> {
    return new ConnectedStreams<T, U>(this.graph, this, other);
  }

  /**
   * Writes the stream to a sink. A `TwoPhaseCommitSink` (CollectSink, FileSink) makes the output
   * exactly-once: it commits only what a completed checkpoint covers.
   */
  sinkTo(sink: Sink<T> | TwoPhaseCommitSink<T, any>): DataStreamSink {
    const createOperator =
      sink.kind === 'two-phase-commit'
        ? () => new TwoPhaseCommitSinkOperator(sink.createWriter())
        : () => new PlainSinkOperator(sink.createWriter() as import('../runtime/sink.ts').SinkWriter<unknown>);
    const node = this.graph.add({ kind: 'sink', name: sink.name, inputs: [this.refs], keySelectors: [null], createOperator, sink });
    return new DataStreamSink(this.graph, node);
  }

  /** Prints every record to standard output (not transactional). */
  print(prefix = ''): DataStreamSink {
    return this.sinkTo({
      name: 'print',
      kind: 'plain',
      createWriter: () => {
        let tag = prefix;
        return {
          open: (ctx: RuntimeContext) => {
            if (ctx.parallelism > 1) tag = `${prefix}${ctx.subtaskIndex + 1}> `;
            else if (prefix) tag = `${prefix}> `;
          },
          write: (record: T) => process.stdout.write(`${tag}${typeof record === 'string' ? record : JSON.stringify(record)}\n`),
        };
      },
    });
  }
}

/** A stream partitioned by key (`keyBy`): its `process` functions have keyed state. */
export class KeyedStream<T, K extends Key> extends DataStream<T> {
  /** @internal */
  constructor(
    graph: LogicalGraph,
    refs: readonly StreamRef[],
    /** The function that gives each record's key. */
    readonly keySelector: (value: T) => K,
  ) {
    super(graph, refs, null);
  }

  /** Runs a function with keyed state; `create` is called once per subtask and attempt. */
  override process<R>(create: () => KeyedProcessFunction<K, T, R>): DataStream<R> {
    const node = this.graph.add({
      kind: 'operator',
      name: 'keyed-process',
      inputs: [this.refs],
      keySelectors: [this.keySelector],
      createOperator: () => new ProcessOperator(create(), [this.keySelector]),
    });
    return new DataStream<R>(this.graph, [{ node, partitioner: null }], node);
  }

  /**
   * Cuts each key's records into windows (tumbling, sliding, session, global) for `reduce`,
   * `aggregate` or `process` per window. Event-time windows need timestamps and watermarks.
   */
  window<W extends Window>(assigner: WindowAssigner<T, W>): WindowedStream<T, K, W> {
    return new WindowedStream<T, K, W>(this, assigner);
  }

  /**
   * Count windows per key: with `slide`, a window of the last `size` records every `slide` records;
   * without, tumbling windows of `size` records (a key's incomplete last window never fires).
   * @throws JobDefinitionError when `size` or `slide` is not an integer >= 1.
   */
  countWindow(size: number, slide?: number): WindowedStream<T, K, GlobalWindow> {
    const windowed = this.window(GlobalWindows.create() as WindowAssigner<T, GlobalWindow>);
    if (slide === undefined) return windowed.trigger(PurgingTrigger.of(CountTrigger.of(size)));
    return windowed.evictor(CountEvictor.of<T>(size)).trigger(CountTrigger.of(slide));
  }

  /**
   * Joins this keyed stream with another by key and time: see `IntervalJoin.between`. Both need
   * event time (a WatermarkStrategy).
   */
  intervalJoin<U>(other: KeyedStream<U, K>): IntervalJoin<T, U, K> {
    return new IntervalJoin<T, U, K>(this, other);
  }

  /** @internal Adds a keyed two-input operator reading this stream (input 0) and `other` (input 1). */
  twoInputKeyedOperator<R>(name: string, other: KeyedStream<any, K>, createOperator: () => StreamOperator): DataStream<R> {
    const node = this.graph.add({
      kind: 'operator',
      name,
      inputs: [this.refs, other.refs],
      keySelectors: [this.keySelector, other.keySelector],
      createOperator,
    });
    return new DataStream<R>(this.graph, [{ node, partitioner: null }], node);
  }

  /** @internal Adds a keyed one-input operator reading this stream. */
  keyedOperator<R>(name: string, createOperator: () => StreamOperator): DataStream<R> {
    const node = this.graph.add({ kind: 'operator', name, inputs: [this.refs], keySelectors: [this.keySelector], createOperator });
    return new DataStream<R>(this.graph, [{ node, partitioner: null }], node);
  }

  /** Rolling reduce per key: emits the updated value for every input record. */
  reduce(reducer: (a: T, b: T) => T): DataStream<T> {
    const stream = this.process<T>((): KeyedProcessFunction<K, T, T> => {
      let acc: ValueState<T>;
      return {
        open(ctx) {
          acc = ctx.getState(new ValueStateDescriptor<T>('reduce'));
        },
        processElement(value, _ctx, out) {
          const current = acc.value();
          const next = current === undefined ? value : reducer(current, value);
          acc.update(next);
          out.collect(next);
        },
      };
    });
    return stream.name('reduce');
  }

  /** Pairs this keyed stream with another; when that one is keyed too, the two-input function has keyed state. */
  override connect<U>(other: DataStream<U>): ConnectedStreams<T, U> {
    return new ConnectedStreams<T, U>(this.graph, this, other);
  }
}

/** Two streams paired by `connect`, for a two-input process function. */
export class ConnectedStreams<A, B> {
  /** @internal */
  constructor(
    private readonly graph: LogicalGraph,
    private readonly first: DataStream<A>,
    private readonly second: DataStream<B>,
  ) {}

  /**
   * A two-input function. When both inputs are keyed streams the function has keyed state, shared by
   * both inputs for the same key; `create` is called once per subtask and attempt.
   * @throws JobDefinitionError when only one of the two inputs is keyed.
   */
  process<R>(create: () => CoProcessFunction<A, B, R> | KeyedCoProcessFunction<any, A, B, R>): DataStream<R> {
    const k1 = this.first instanceof KeyedStream ? (this.first.keySelector as (r: any) => Key) : null;
    const k2 = this.second instanceof KeyedStream ? (this.second.keySelector as (r: any) => Key) : null;
    if ((k1 === null) !== (k2 === null)) {
      throw new JobDefinitionError('connect: either both inputs are keyed (keyBy on each) or neither');
    }
    const selectors = [k1, k2];
    const node = this.graph.add({
      kind: 'operator',
      name: k1 ? 'keyed-co-process' : 'co-process',
      inputs: [this.first.refs, this.second.refs],
      keySelectors: selectors,
      createOperator: () => new ProcessOperator(create(), selectors),
    });
    return new DataStream<R>(this.graph, [{ node, partitioner: null }], node);
  }
}
