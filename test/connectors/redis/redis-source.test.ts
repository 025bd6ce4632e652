/**
 * The Redis source's reader driven directly against the real server: keys discovered with a
 * pattern at open (each a split), `startFrom: 'latest'` pinned to a concrete id in the first
 * snapshot, restored positions resumed after, and options checked.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/index.ts';
import { RedisStreamSource } from '../../../src/connectors/redis/index.ts';
import type { Collector, SourceReader } from '../../../src/index.ts';
import { ListStateDescriptor } from '../../../src/state/descriptors.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import { until } from '../../support/jobs.ts';
import { runtimeContext } from '../../support/runtime-context.ts';
import { cleanup, client, uniquePrefix } from './redis-support.ts';

let c: Redis;
beforeAll(async () => {
  c = await client();
});
afterAll(() => c.disconnect());

const STATE = new ListStateDescriptor<{ split: { id: string }; position: string }>('split-source-splits');

/** Polls `reader` until `n` records arrived (the fetch loop runs in the background). */
async function drain(reader: SourceReader<string>, n: number): Promise<string[]> {
  const got: string[] = [];
  const out: Collector<string> = { collect: (r) => got.push(r) };
  await until(`${n} records`, () => {
    reader.poll(out, 1000);
    return got.length >= n;
  });
  return got;
}

describe('RedisStreamSource reader', () => {
  it('discovers stream keys by pattern; latest starts after what is there at open; a restore resumes after the snapshot', async () => {
    const prefix = uniquePrefix('discover');
    try {
      for (const k of ['a', 'b']) await c.xadd(`${prefix}:s:${k}`, '*', 'v', `${k}-old`);
      await c.set(`${prefix}:s:not-a-stream`, 'x');
      const source = new RedisStreamSource<string>({ pattern: `${prefix}:s:*`, startFrom: 'latest', blockMs: 20, decode: (e) => e.fields.v! });
      const state = new HeapOperatorStateBackend({ uid: 'src', subtask: 0 });
      const reader = source.createReader();
      await reader.open(runtimeContext({ operatorState: state }));
      reader.snapshotState(0); // before any poll: the position is already the concrete id, not 'latest'
      expect(
        state
          .getUnionListState(STATE)
          .get()
          .every((e) => /^\d+-\d+$/.test(e.position)),
      ).toBe(true);
      for (const k of ['a', 'b']) await c.xadd(`${prefix}:s:${k}`, '*', 'v', `${k}-new`);
      expect((await drain(reader, 2)).sort()).toEqual(['a-new', 'b-new']);
      reader.snapshotState(1);
      const entries = state.getUnionListState(STATE).get();
      expect(entries.map((e) => e.split.id).sort()).toEqual([`${prefix}:s:a`, `${prefix}:s:b`]);
      expect(entries.every((e) => /^\d+-\d+$/.test(e.position))).toBe(true);
      reader.close();

      for (const k of ['a', 'b']) await c.xadd(`${prefix}:s:${k}`, '*', 'v', `${k}-after`);
      const restored = source.createReader();
      await restored.open(runtimeContext({ operatorState: state, restored: true }));
      expect((await drain(restored, 2)).sort()).toEqual(['a-after', 'b-after']);
      restored.close();
    } finally {
      await cleanup(c, prefix);
    }
  });

  it('checks its options, naming the one at fault', () => {
    expect(() => new RedisStreamSource({})).toThrow(ConfigError);
    expect(() => new RedisStreamSource({ keys: ['a'], pattern: 'b*' })).toThrow(/RedisStreamSource.keys: give either keys or pattern/);
    expect(() => new RedisStreamSource({ keys: ['a', 'a'] })).toThrow(/lists a key twice/);
    expect(() => new RedisStreamSource({ keys: ['a'], startFrom: 'middle' as never })).toThrow(/RedisStreamSource.startFrom/);
    expect(() => new RedisStreamSource({ keys: ['a'], blockMs: 0 })).toThrow(/RedisStreamSource.blockMs/);
  });
});
