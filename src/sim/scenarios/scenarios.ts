/**
 * Built-in scenario jobs for the simulator: keyed counts, a two-input join, a union, an
 * exactly-once file sink, every kind of keyed state, and event time (event-time-scenario.ts). Each builds a real Weir job from sequence
 * sources, with a keyed operator that checks per-key sequences (checker b) and keeps per-key
 * `last*` state (checker c). Sinks write to an external side that outlives every process.
 */
import { FileSink, readCommittedLines } from '../../connectors/files/file-sink.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import type { DataStream } from '../../api/data-stream.ts';
import type { KeyedCoProcessFunction, KeyedProcessFunction, ProcessFunction } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink } from '../../runtime/sink.ts';
import { ListStateDescriptor, ValueStateDescriptor } from '../../state/descriptors.ts';
import type { ListState, ValueState } from '../../state/state.ts';
import { CommitLedger } from '../checkers/commit-once.ts';
import { type CommitLatency, ExternalTransactionalSink, ExternalTransactionStore } from '../world/external-sink.ts';
import { observeFileSink } from '../world/observed-file-sink.ts';
import { finalCounts, seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';
import { stateKindsFunction } from './state-kinds.ts';
import {
  IDLE_PARTITION_RECORDS,
  IDLE_PARTITION_SRC,
  idlePartitionSource,
  IdlePartitionOpenings,
  type WindowScenario,
  windowSource,
  windowStage,
} from './window-scenarios.ts';
import { bucketSumsFunction, eventTimeOf, eventTimeStrategy, idleSource, timedSource } from './event-time-scenario.ts';
import { SplitLogs, splitSourceStage } from './split-source-scenario.ts';
import type { Scheduler } from '../../core/time.ts';

import { countSource, countWindowStages } from './window-count-scenario.ts';
import { checkProcessingWindows, processingDone, processingSource, processingStages } from './window-processing-scenario.ts';
import { checkMultiset, type OutputRule } from '../checkers/exactly-once.ts';
import { referenceWindowLines } from '../checkers/window-reference.ts';
import type { SimMode } from '../knobs.ts';

export type ScenarioName =
  | 'keyed-counts'
  | 'join'
  | 'union'
  | 'file-sink'
  | 'state-kinds'
  | 'event-time'
  | WindowScenario
  | 'window-count'
  | 'window-processing'
  | 'split-source'
  | 'fan-out';
export const SCENARIOS: readonly ScenarioName[] = [
  'keyed-counts',
  'join',
  'union',
  'file-sink',
  'state-kinds',
  'event-time',
  'window-tumbling',
  'window-sliding',
  'window-session',
  'window-count',
  'window-processing',
];
/** Built-in scenarios run only when named (`--job`), not in the default rotation of seeds. */
export const JOB_ONLY_SCENARIOS: readonly ScenarioName[] = ['split-source', 'fan-out'];

/**
 * The job as first deployed, or as changed between a savepoint and its resume: an operator added
 * before the keyed one, and the stateful tag operator renamed (its old state is not restored and
 * it must start empty).
 */
export type JobVariant = 'original' | 'changed';

export type SequenceMode = 'exact' | 'no-skip';

/** Where the keyed operator reports sequence violations (checker b). */
export class SequenceLog {
  readonly violations: string[] = [];
  check(mode: SequenceMode, what: string, last: number, seq: number): void {
    if (mode === 'exact' ? seq !== last + 1 : seq > last + 1) {
      if (this.violations.length < 20) this.violations.push(`${what}: got sequence ${seq} after ${last}`);
    }
  }
}

export interface ScenarioSpec {
  readonly parallelism: number;
  readonly count: number;
  readonly keysPerSplit: number;
  readonly ratePerSec: number;
  /** The event-time scenario's idle source sends its one record this long (virtual ms) after it starts. */
  readonly idleAfterMs: number;
}

export interface BuiltScenario {
  /** The sources, by uid, for snapshot-consistency checks. */
  readonly sources: ReadonlyArray<{ uid: string; spec: SeqSourceSpec }>;
  /** uid of the keyed operator and, per source uid, the state name holding its last sequence per key (null: no snapshot check). */
  readonly keyed: { uid: string; stateBySource: Record<string, string> } | null;
  /** The committed output. */
  committed(): string[];
}

export const KEYED_UID = 'sim-keyed';

/**
 * How a scenario's committed output is checked: against the fault-free run as a multiset, except
 * tumbling and sliding event-time windows, against the windows computed from the input
 * (window-reference.ts), and processing-time windows, whose windows depend on arrival times: their
 * own checker (window-processing-scenario.ts) on the committed output alone.
 */
export function scenarioOutputRule(name: ScenarioName, source: { readonly count: number; readonly keysPerSplit: number }): OutputRule {
  const w: SeqSourceSpec = { src: 'w', splits: 1, keysPerSplit: source.keysPerSplit, count: source.count };
  if (name === 'window-tumbling' || name === 'window-sliding') {
    // Not the fault-free run, which has the engine's bugs too: the windows computed from the input (window-reference.ts).
    const expected = referenceWindowLines(name, w);
    return { kind: 'custom', check: (committed, _oracle, guarantee) => checkMultiset(guarantee, (committed[''] ?? []).map(String), expected) };
  }
  if (name !== 'window-processing') return { kind: 'multiset' };
  const expected = finalCounts(w);
  return { kind: 'custom', check: (committed, _oracle, guarantee) => checkProcessingWindows(committed[''] ?? [], expected, guarantee) };
}

/**
 * The external systems a scenario writes to, kept across the processes and runs of one seed (a
 * killed process, the one resumed after it and the run resumed from a savepoint all write to the
 * same place, as real jobs do). Each process builds its own sink objects over them.
 */
export class ScenarioSinks {
  readonly ledger: CommitLedger;
  readonly store: ExternalTransactionStore;
  /** The split-source scenario's source side (split-source-scenario.ts), made by its first process. */
  splitLogs: SplitLogs | null = null;
  /** (Re)starts of the window scenarios whose timed split waited for a barrier (window-scenarios.ts, IdlePartitionOpenings). */
  windowStartsHeld = 0;
  /** Set by each process before it builds its job: how slowly the external store commits, on that process's scheduler. */
  commitLatency: CommitLatency | null = null;

  /** `newestDurable`: the newest checkpoint or savepoint id whose `_metadata` is on the disk. */
  constructor(
    readonly fileDir: string | null,
    readonly newestDurable?: () => number,
  ) {
    this.ledger = new CommitLedger(newestDurable);
    this.store = new ExternalTransactionStore(this.ledger);
  }

  /** A sink over the external transactional store, standing in for sink `uid`. */
  forUid(uid: string): TwoPhaseCommitSink<unknown, unknown> {
    return new ExternalTransactionalSink(uid, this.store, this.commitLatency);
  }

  /** The real FileSink writing into the seed's directory, watched for repeated commits. */
  fileSink(): TwoPhaseCommitSink<unknown, unknown> {
    return observeFileSink(new FileSink({ directory: this.fileDir! }), this.ledger);
  }

  committed(user: boolean): string[] {
    if (this.fileDir && !user) return readCommittedLines(this.fileDir);
    return this.store.committed().map(({ uid, record }) => (user ? `${uid}\t${record}` : record));
  }
}

function sequenceSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number): DataStream<SeqRecord> {
  return env
    .generate({ count: spec.count, ratePerSec }, (i) => seqRecord(spec, i))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`);
}

const SEEN = new ListStateDescriptor<{ uid: string; n: number }>('seen');

/**
 * A pass-through keeping a count in operator state, tagged with its uid: state restored into an
 * operator under another uid (an added or renamed one given someone else's state) is a violation.
 */
function counting<R extends SeqRecord>(stream: DataStream<R>, uid: string, log: SequenceLog, parallelism?: number): DataStream<R> {
  const out = stream
    .process((): ProcessFunction<R, R> => {
      let seen!: ListState<{ uid: string; n: number }>;
      let n = 0;
      return {
        open(ctx) {
          seen = ctx.getOperatorListState(SEEN);
          for (const entry of seen.get()) {
            if (entry.uid !== uid) log.violations.push(`${uid} subtask ${ctx.subtaskIndex} was restored with the state of ${entry.uid}`);
            n += entry.n;
          }
        },
        processElement(r, _ctx, out) {
          n++;
          out.collect(r);
        },
        snapshotState() {
          seen.update([{ uid, n }]);
        },
      };
    })
    .uid(uid)
    .name(uid);
  return parallelism === undefined ? out : out.setParallelism(parallelism);
}

/**
 * The stateful stage before the keyed operator: `sim-tag`, or after the change `sim-added` then
 * `sim-tag-v2`; `parallelism` fixes it (else the job's).
 */
function tagStage<R extends SeqRecord>(stream: DataStream<R>, src: string, variant: JobVariant, log: SequenceLog, parallelism?: number): DataStream<R> {
  if (variant === 'original') return counting(stream, `sim-tag-${src}`, log, parallelism);
  return counting(counting(stream, `sim-added-${src}`, log, parallelism), `sim-tag-v2-${src}`, log, parallelism);
}

function keyedSequence(stream: DataStream<SeqRecord>, log: SequenceLog, mode: SequenceMode, stateName: (key: string) => string): DataStream<string> {
  return stream
    .keyBy((r) => r.key)
    .process((): KeyedProcessFunction<string, SeqRecord, string> => {
      const states = new Map<string, ValueState<number>>();
      let open!: (name: string) => ValueState<number>;
      return {
        open(ctx) {
          open = (name) => ctx.getState(new ValueStateDescriptor<number>(name));
        },
        processElement(r, ctx, out) {
          const name = stateName(r.key);
          let s = states.get(name);
          if (!s) states.set(name, (s = open(name)));
          const last = s.value() ?? 0;
          log.check(mode, `key ${ctx.currentKey}`, last, r.seq);
          s.update(Math.max(last, r.seq));
          out.collect(`${r.key}:${r.seq}`);
        },
      };
    })
    .uid(KEYED_UID)
    .name('sequence-check');
}

export interface ScenarioContext {
  readonly spec: ScenarioSpec;
  readonly log: SequenceLog;
  readonly mode: SequenceMode;
  readonly sinks: ScenarioSinks;
  readonly variant: JobVariant;
  /** The process's scheduler (sources that fetch asynchronously, as the split-source scenario's). */
  readonly scheduler?: Scheduler;
  /** The seed's checkpointing mode. */
  readonly checkpointMode: SimMode;
  /**
   * What the job master's and the task managers' builds of one process share: the simulated
   * world's side channels between subtasks that may run in different task managers (an external
   * system, not state of the job).
   */
  readonly shared?: ProcessShared;
}

/** Side channels of the simulated world, one per process, shared by every build of the job in it. */
export interface ProcessShared {
  openings?: IdlePartitionOpenings;
}

/** The idle partition's openings of this process, created by its first build. */
function newOpenings(c: ScenarioContext, onHeld: () => void): IdlePartitionOpenings {
  const openings = new IdlePartitionOpenings(onHeld);
  if (c.shared) c.shared.openings = openings;
  return openings;
}

export function buildScenario(name: ScenarioName, env: StreamEnvironment, c: ScenarioContext): BuiltScenario {
  const { spec, log, mode, sinks } = c;
  const src = (s: string): SeqSourceSpec => ({ src: s, splits: spec.parallelism, keysPerSplit: spec.keysPerSplit, count: spec.count });
  const committed = () => sinks.committed(false);
  const tagged = (s: SeqSourceSpec, rate: number) => tagStage(sequenceSource(env, s, rate), s.src, c.variant, log);
  switch (name) {
    case 'split-source': {
      sinks.splitLogs ??= new SplitLogs(spec.count, spec.keysPerSplit, log, sinks.newestDurable ?? (() => Infinity), () => sinks.store.committed());
      const { results, late } = splitSourceStage(env, sinks.splitLogs, c.scheduler!, log, mode, c.variant === 'changed');
      results.sinkTo(sinks.forUid('sink')).uid('sink');
      late.sinkTo(sinks.forUid('late-sink')).uid('late-sink');
      return { sources: [], keyed: null, committed };
    }
    case 'window-tumbling':
    case 'window-sliding':
    case 'window-session': {
      // One split: the window operator's watermark at each record is a function of the input order (window-scenarios.ts).
      const w: SeqSourceSpec = { src: 'w', splits: 1, keysPerSplit: spec.keysPerSplit, count: spec.count };
      // And, with aligned exactly-once checkpoints, an idle partition that never holds the watermark
      // back once idle (window-scenarios.ts says why not in the other modes).
      const idle: SeqSourceSpec = { src: IDLE_PARTITION_SRC, splits: 1, keysPerSplit: 1, count: IDLE_PARTITION_RECORDS };
      const withIdle = c.checkpointMode === 'exactly-once';
      const openings = withIdle ? (c.shared?.openings ?? newOpenings(c, () => sinks.windowStartsHeld++)) : undefined;
      const timed = tagStage(windowSource(env, w, spec.ratePerSec, openings), 'w', c.variant, log, 1);
      const input = openings ? timed.union(idlePartitionSource(env, idle, spec.idleAfterMs / 2, openings)) : timed;
      const { results, late } = windowStage(name, input, spec.keysPerSplit, KEYED_UID);
      results.sinkTo(sinks.forUid('sink')).uid('sink');
      late.sinkTo(sinks.forUid('late-sink')).uid('late-sink');
      return {
        sources: [{ uid: 'source-w', spec: w }, ...(withIdle ? [{ uid: `source-${IDLE_PARTITION_SRC}`, spec: idle }] : [])],
        keyed: null,
        committed,
      };
    }
    case 'window-count': {
      // One split: a count window's records follow from each key's input order (window-count-scenario.ts).
      const w: SeqSourceSpec = { src: 'w', splits: 1, keysPerSplit: spec.keysPerSplit, count: spec.count };
      const input = tagStage(countSource(env, w, spec.ratePerSec), 'w', c.variant, log, 1);
      countWindowStages(input, KEYED_UID).sinkTo(sinks.forUid('sink')).uid('sink');
      return { sources: [{ uid: 'source-w', spec: w }], keyed: null, committed };
    }
    case 'window-processing': {
      // One split, each key's records in order on one channel; the job stays open until every record is counted in committed output.
      const w: SeqSourceSpec = { src: 'w', splits: 1, keysPerSplit: spec.keysPerSplit, count: spec.count };
      const input = tagStage(processingSource(env, w, spec.ratePerSec), 'w', c.variant, log, 1);
      const expected = finalCounts(w);
      const done = () => processingDone(sinks.committed(false), expected);
      processingStages(env, input, done, KEYED_UID).sinkTo(sinks.forUid('sink')).uid('sink');
      return { sources: [{ uid: 'source-w', spec: w }], keyed: null, committed };
    }
    case 'event-time': {
      // Source a and its tag stage keep the first run's parallelism (one split per subtask, so its
      // event time stays within the out-of-orderness bound); a rescale moves the keyed operator.
      const a = src('a');
      const idle: SeqSourceSpec = { src: 'idle', splits: 1, keysPerSplit: 1, count: 1 };
      const timed = timedSource(env, a, spec.ratePerSec, (i) => eventTimeOf(a, i))
        .assignTimestampsAndWatermarks(eventTimeStrategy(false))
        .uid('timestamps-a')
        .setParallelism(a.splits);
      tagStage(timed, 'a', c.variant, log, a.splits)
        .union(idleSource(env, idle, spec.idleAfterMs))
        .keyBy((r) => r.key)
        .process(() => bucketSumsFunction(log, mode))
        .uid(KEYED_UID)
        .name('event-time-buckets')
        .sinkTo(sinks.forUid('sink'))
        .uid('sink');
      return {
        sources: [
          { uid: 'source-a', spec: a },
          { uid: 'source-idle', spec: idle },
        ],
        keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last', 'source-idle': 'last' } },
        committed,
      };
    }
    case 'keyed-counts':
    case 'file-sink':
    case 'state-kinds': {
      const a = src('a');
      const keyed: BuiltScenario['keyed'] = { uid: KEYED_UID, stateBySource: { 'source-a': 'last' } };
      const input = tagged(a, spec.ratePerSec);
      const out =
        name === 'state-kinds'
          ? input
              .keyBy((r) => r.key)
              .process(() => stateKindsFunction(log, mode))
              .uid(KEYED_UID)
              .name('state-kinds')
          : keyedSequence(input, log, mode, () => 'last');
      out.sinkTo(name === 'file-sink' ? sinks.fileSink() : sinks.forUid('sink')).uid('sink');
      return { sources: [{ uid: 'source-a', spec: a }], keyed, committed };
    }
    case 'fan-out': {
      // Source a's tag stage feeds the keyed check through a writer and, chained to it beside that
      // writer, a second stateful stage with a sink of its own: a chain that branches
      // (graph/job-graph.ts), snapshotted, restored and rescaled as one subtask under every fault.
      const a = src('a');
      const input = tagged(a, spec.ratePerSec);
      keyedSequence(input, log, mode, () => 'last')
        .sinkTo(sinks.forUid('sink'))
        .uid('sink');
      counting(input, 'sim-branch-a', log)
        .map((r) => `branch:${r.key}:${r.seq}`)
        .uid('sim-branch-format')
        .sinkTo(sinks.forUid('branch-sink'))
        .uid('branch-sink');
      return { sources: [{ uid: 'source-a', spec: a }], keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last' } }, committed };
    }
    case 'union': {
      const a = src('a');
      const b = src('b');
      const merged = tagged(a, spec.ratePerSec)
        .union(tagged(b, spec.ratePerSec / 2))
        .map((r) => r);
      keyedSequence(merged, log, mode, () => 'last')
        .sinkTo(sinks.forUid('sink'))
        .uid('sink');
      return {
        sources: [
          { uid: 'source-a', spec: a },
          { uid: 'source-b', spec: b },
        ],
        keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last', 'source-b': 'last' } },
        committed,
      };
    }
    case 'join': {
      // Both inputs use keys "x<split>.<r>": the same key space, so records of A and B meet.
      const a = { ...src('x'), origin: 'A' };
      const b = { ...src('x'), origin: 'B', count: Math.floor(spec.count / 2) };
      const left = sequenceSource(env, { ...a, src: 'x' }, spec.ratePerSec)
        .uid('source-a')
        .name('source-a');
      const right = sequenceSource(env, b, spec.ratePerSec / 2)
        .uid('source-b')
        .name('source-b');
      left
        .keyBy((r) => r.key)
        .connect(right.keyBy((r) => r.key))
        .process((): KeyedCoProcessFunction<string, SeqRecord, SeqRecord, string> => {
          let lastA!: ValueState<number>;
          let lastB!: ValueState<number>;
          return {
            open(ctx) {
              lastA = ctx.getState(new ValueStateDescriptor<number>('lastA'));
              lastB = ctx.getState(new ValueStateDescriptor<number>('lastB'));
            },
            processElement1(r, ctx, out) {
              const last = lastA.value() ?? 0;
              log.check(mode, `input A key ${ctx.currentKey}`, last, r.seq);
              lastA.update(Math.max(last, r.seq));
              out.collect(`A:${r.key}:${r.seq}`);
              if ((lastB.value() ?? 0) >= r.seq) out.collect(`J:${r.key}:${r.seq}`);
            },
            processElement2(r, ctx, out) {
              const last = lastB.value() ?? 0;
              log.check(mode, `input B key ${ctx.currentKey}`, last, r.seq);
              lastB.update(Math.max(last, r.seq));
              out.collect(`B:${r.key}:${r.seq}`);
              if ((lastA.value() ?? 0) >= r.seq) out.collect(`J:${r.key}:${r.seq}`);
            },
          };
        })
        .uid(KEYED_UID)
        .name('join')
        .sinkTo(sinks.forUid('sink'))
        .uid('sink');
      return {
        sources: [
          { uid: 'source-a', spec: a },
          { uid: 'source-b', spec: b },
        ],
        keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'lastA', 'source-b': 'lastB' } },
        committed,
      };
    }
  }
}
