/**
 * CPU per record of heap keyed state access, two source trees interleaved in one process (same
 * heap, same machine load): a tree before a change against the tree this file is in.
 *
 *   git archive <commit> | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
 *   node --expose-gc --import tsx bench/heap-access-compare.ts /tmp/before [records] [rounds] [workload]
 *
 * Workloads, each over a heap backend owning all 128 key groups, keys built afresh per record
 * (`key-${i}`, as a decoded record's key is): value_count (ValueState read + write per record, the
 * keyed count), aggregate_in_place (AggregatingState whose `add` mutates the accumulator), and
 * map_windows (q5's pattern: per record, 5 window namespaces each read and written in one MapState
 * and two timer keys checked in another; a quarter of the entries removed every 1,024 records).
 * CPU is process.cpuUsage (user + system). Order alternates per round; an A/A run (the same tree
 * twice) shows the method's own bias and spread.
 */
import { resolve } from 'node:path';
import type { KeyGroup } from '../src/core/ids.ts';
import type * as Descriptors from '../src/state/descriptors.ts';
import type { HeapKeyedStateBackend } from '../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup } from '../src/state/key-groups.ts';
import type { AggregatingState, MapState, ValueState } from '../src/state/state.ts';

interface Tree {
  readonly Backend: typeof HeapKeyedStateBackend;
  readonly d: typeof Descriptors;
}

async function loadTree(root: string): Promise<Tree> {
  const { HeapKeyedStateBackend: Backend } = (await import(resolve(root, 'src/state/heap/heap-keyed-backend.ts'))) as {
    HeapKeyedStateBackend: typeof HeapKeyedStateBackend;
  };
  const d = (await import(resolve(root, 'src/state/descriptors.ts'))) as typeof Descriptors;
  return { Backend, d };
}

const [beforeRoot, recordsArg, roundsArg, only] = process.argv.slice(2);
if (beforeRoot === undefined) throw new Error('usage: heap-access-compare.ts <before-tree> [records] [rounds] [workload]');
const N = Number(recordsArg ?? 1_000_000);
const ROUNDS = Number(roundsArg ?? 9);
const KEYS = 10_000;

// Key indices (xorshift32, seed 42) and their key groups, computed before timing.
const idx = new Int32Array(N);
let x = 42;
for (let i = 0; i < N; i++) {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  idx[i] = (x >>> 0) % KEYS;
}
const kgOf = new Int32Array(KEYS);
for (let k = 0; k < KEYS; k++) kgOf[k] = assignToKeyGroup(`key-${k}`, 128);

interface Acc {
  s: number;
  c: number;
}
const average = {
  createAccumulator: (): Acc => ({ s: 0, c: 0 }),
  add: (v: number, a: Acc): Acc => {
    a.s += v;
    a.c++;
    return a;
  },
  getResult: (a: Acc): number => a.s / a.c,
};

function backend(t: Tree): HeapKeyedStateBackend {
  return new t.Backend({ uid: 'op', subtask: 0, keyGroupRange: { start: 0, end: 127 }, maxParallelism: 128 });
}

function setKey(b: HeapKeyedStateBackend, k: number): void {
  b.setCurrentKey(`key-${k}`, kgOf[k] as KeyGroup);
}

const NAMESPACES = Array.from({ length: 16 }, (_, j) => `${1700000000000 + j * 2000}:${1700000010000 + j * 2000}`);
const TIMER_KEYS = NAMESPACES.map((n) => `e${n}|x`);

const workloads: Record<string, (t: Tree) => number> = {
  value_count(t) {
    const b = backend(t);
    const v = b.getState<ValueState<number>>(new t.d.ValueStateDescriptor<number>('c'));
    let sum = 0;
    for (let i = 0; i < N; i++) {
      setKey(b, idx[i]!);
      const c = (v.value() ?? 0) + 1;
      v.update(c);
      sum += c;
    }
    return sum;
  },
  aggregate_in_place(t) {
    const b = backend(t);
    const a = b.getState<AggregatingState<number, number>>(new t.d.AggregatingStateDescriptor('a', average));
    for (let i = 0; i < N; i++) {
      setKey(b, idx[i]!);
      a.add(i & 7);
    }
    return 0;
  },
  map_windows(t) {
    const b = backend(t);
    const contents = b.getState<MapState<string, number>>(new t.d.MapStateDescriptor<string, number>('w'));
    const timers = b.getState<MapState<string, number>>(new t.d.MapStateDescriptor<string, number>('t'));
    for (let i = 0; i < N; i++) {
      setKey(b, idx[i]! % 1000);
      const w0 = (i >> 10) & 7;
      for (let w = w0; w < w0 + 5; w++) {
        contents.put(NAMESPACES[w]!, (contents.get(NAMESPACES[w]!) ?? 0) + 1);
        if (!timers.contains(TIMER_KEYS[w]!)) timers.put(TIMER_KEYS[w]!, 1);
        if (!timers.contains(TIMER_KEYS[w + 1]!)) timers.put(TIMER_KEYS[w + 1]!, 1);
      }
      if ((i & 1023) === 1023) {
        for (let w = 0; w < 4; w++) {
          contents.remove(NAMESPACES[(w0 + w) & 15]!);
          timers.remove(TIMER_KEYS[(w0 + w) & 15]!);
        }
      }
    }
    return 0;
  },
};

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (a: readonly number[]): number => [...a].sort((p, q) => p - q)[Math.floor(a.length / 2)]!;
const gc = (globalThis as { gc?: () => void }).gc;

const before = await loadTree(beforeRoot);
const after = await loadTree(resolve(import.meta.dirname, '..'));
for (const [name, run] of Object.entries(workloads)) {
  if (only !== undefined && name !== only) continue;
  run(before);
  run(after);
  const ns = { before: [] as number[], after: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const which of order) {
      gc?.();
      const t0 = cpuMs();
      run(which === 'before' ? before : after);
      ns[which].push(((cpuMs() - t0) * 1e6) / N);
    }
  }
  const ratios = ns.before.map((b, i) => b / ns.after[i]!);
  console.log(
    `${name}: before ${median(ns.before).toFixed(1)} ns/record, after ${median(ns.after).toFixed(1)} ns/record (CPU); ` +
      `before/after per round ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`,
  );
}
