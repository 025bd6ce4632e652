/**
 * Built-in scenario jobs for the simulator: keyed counts, a two-input join, a union, and an
 * exactly-once file sink. Each builds a real Weir job from sequence sources, with a keyed operator
 * that checks per-key sequences (checker b) and keeps per-key `last*` state (checker c).
 */
import { CollectSink } from '../connectors/collect/collect-sink.ts';
import { FileSink, readCommittedLines } from '../connectors/files/file-sink.ts';
import type { StreamEnvironment } from '../api/environment.ts';
import type { DataStream } from '../api/data-stream.ts';
import type { KeyedCoProcessFunction, KeyedProcessFunction } from '../runtime/functions.ts';
import { ValueStateDescriptor } from '../state/descriptors.ts';
import type { ValueState } from '../state/state.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';

export type ScenarioName = 'keyed-counts' | 'join' | 'union' | 'file-sink';
export const SCENARIOS: readonly ScenarioName[] = ['keyed-counts', 'join', 'union', 'file-sink'];

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
 * The external systems a scenario writes to, kept across the runs of one seed (a run and the run
 * resumed from its savepoint write to the same place, as real jobs do).
 */
export class ScenarioSinks {
  readonly collect = new CollectSink<string>('collect');
  private readonly byUid = new Map<string, CollectSink<unknown>>();

  constructor(readonly fileDir: string | null) {}

  /** The in-memory sink standing in for the user's sink `uid`. */
  forUid(uid: string): CollectSink<unknown> {
    let sink = this.byUid.get(uid);
    if (!sink) this.byUid.set(uid, (sink = new CollectSink<unknown>(uid)));
    return sink;
  }

  committed(user: boolean): string[] {
    if (user) return [...this.byUid].flatMap(([uid, sink]) => sink.results().map((r) => `${uid}\t${typeof r === 'string' ? r : JSON.stringify(r)}`));
    return this.fileDir ? readCommittedLines(this.fileDir) : this.collect.results();
  }
}

function sequenceSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number): DataStream<SeqRecord> {
  return env
    .generate({ count: spec.count, ratePerSec }, (i) => seqRecord(spec, i))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`);
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

export function buildScenario(name: ScenarioName, env: StreamEnvironment, spec: ScenarioSpec, log: SequenceLog, mode: SequenceMode, sinks: ScenarioSinks): BuiltScenario {
  const src = (s: string): SeqSourceSpec => ({ src: s, splits: spec.parallelism, keysPerSplit: spec.keysPerSplit, count: spec.count });
  const collect = sinks.collect;
  const sinkDir = sinks.fileDir;
  switch (name) {
    case 'keyed-counts':
    case 'file-sink': {
      const a = src('a');
      const out = keyedSequence(sequenceSource(env, a, spec.ratePerSec), log, mode, () => 'last');
      if (name === 'file-sink') {
        out.sinkTo(new FileSink({ directory: sinkDir! })).uid('sink');
        return { sources: [{ uid: 'source-a', spec: a }], keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last' } }, committed: () => readCommittedLines(sinkDir!) };
      }
      out.sinkTo(collect).uid('sink');
      return { sources: [{ uid: 'source-a', spec: a }], keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last' } }, committed: () => collect.results() };
    }
    case 'union': {
      const a = src('a');
      const b = src('b');
      const merged = sequenceSource(env, a, spec.ratePerSec).union(sequenceSource(env, b, spec.ratePerSec / 2)).map((r) => r);
      keyedSequence(merged, log, mode, () => 'last').sinkTo(collect).uid('sink');
      return {
        sources: [
          { uid: 'source-a', spec: a },
          { uid: 'source-b', spec: b },
        ],
        keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'last', 'source-b': 'last' } },
        committed: () => collect.results(),
      };
    }
    case 'join': {
      // Both inputs use keys "x<split>.<r>": the same key space, so records of A and B meet.
      const a = { ...src('x'), origin: 'A' };
      const b = { ...src('x'), origin: 'B', count: Math.floor(spec.count / 2) };
      const left = sequenceSource(env, { ...a, src: 'x' }, spec.ratePerSec).uid('source-a').name('source-a');
      const right = sequenceSource(env, b, spec.ratePerSec / 2).uid('source-b').name('source-b');
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
        .sinkTo(collect)
        .uid('sink');
      return {
        sources: [
          { uid: 'source-a', spec: a },
          { uid: 'source-b', spec: b },
        ],
        keyed: { uid: KEYED_UID, stateBySource: { 'source-a': 'lastA', 'source-b': 'lastB' } },
        committed: () => collect.results(),
      };
    }
  }
}
