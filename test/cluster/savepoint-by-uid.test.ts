/**
 * Savepoint state is mapped to operators by uid, never by position:
 * a savepoint of `keys -> count -> sink` restores into a changed job that has a new stateful
 * operator ahead of `count` (and a stateless one chained to the source), so every operator after
 * the source sits at another position than in the savepoint. The counts go on exactly.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment, ValueStateDescriptor, type KeyedProcessFunction, type ValueState } from '../../src/index.ts';
import { readCheckpointMetadataAt } from '../support/read-state.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

const N = 4_000;
const KEYS = 50;
const key = (i: number) => `k${(i * 7919) % KEYS}`;

function expectedOutput(): string[] {
  const counts = new Map<string, number>();
  return Array.from({ length: N }, (_, i) => {
    const n = (counts.get(key(i)) ?? 0) + 1;
    counts.set(key(i), n);
    return `${key(i)}:${n}`;
  }).sort();
}

/** Passes keys on; keeps state of its own (how many it saw), which must not be mistaken for the counts. */
function seen(): KeyedProcessFunction<string, string, string> {
  let n: ValueState<number>;
  return {
    open(ctx) {
      n = ctx.getState(new ValueStateDescriptor<number>('seen', 0));
    },
    processElement(k, _ctx, out) {
      n.update((n.value() ?? 0) + 1);
      out.collect(k);
    },
  };
}

const root = tempDir();
afterAll(() => rmSync(root, { recursive: true, force: true }));

function job(changed: boolean, sink: CollectSink<string>, gate: SourceGate): StreamEnvironment {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: join(root, changed ? 'chk-2' : 'chk-1'),
    checkpointing: { retention: 'retain-on-cancel' },
    restartStrategy: { type: 'none' },
  });
  let keys = heldGenerate(env, { count: N }, key, { gate }).uid('keys');
  if (changed) {
    keys = keys.map((k: string) => k).uid('tag');
    keys = keys
      .keyBy((k) => k)
      .process(seen)
      .uid('seen');
  }
  keys
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .sinkTo(sink)
    .uid('sink');
  return env;
}

describe('savepoint state by uid', () => {
  it('restores into a job with operators added ahead of the stateful one: the counts go on exactly', async () => {
    const external = new CollectSink<string>();
    const gate = new SourceGate(1_000);
    const first = await job(false, external, gate).executeAsync('by-uid-1');
    await whenRunning(first);
    await gate.reached(2);
    const savepoint = await first.stopWithSavepoint(join(root, 'savepoints'));
    expect((await first.result).status).toBe('FINISHED');
    const uids = (await readCheckpointMetadataAt(savepoint)).operators.map((o) => o.uid);
    expect(uids).toContain('count');

    const result = await job(true, external, new SourceGate(Infinity)).execute('by-uid-2', { restoreFrom: savepoint });
    expect(result.status).toBe('FINISHED');
    expect(external.results().sort()).toEqual(expectedOutput());
  });
});
