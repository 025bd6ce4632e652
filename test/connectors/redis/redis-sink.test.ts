/**
 * The Redis sink's writer driven directly against the real server: a committable commits once
 * however often it is committed, by the same run or by a later one after a restore; a transaction
 * of another run with the same checkpoint is a different transaction; the newest committed
 * checkpoint is read back; options are checked.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/index.ts';
import { RedisStreamSink } from '../../../src/connectors/redis/index.ts';
import { runtimeContext } from '../../support/runtime-context.ts';
import { cleanup, client, uniquePrefix } from './redis-support.ts';

let c: Redis;
beforeAll(async () => {
  c = await client();
});
afterAll(() => c.disconnect());

describe('RedisStreamSink writer', () => {
  it('commits a pre-committed epoch once, however often and by whichever run it is committed again', async () => {
    const prefix = uniquePrefix('sink');
    const out = `${prefix}:out`;
    try {
      const sink = new RedisStreamSink<{ v: string }>({ key: out });
      expect(await sink.newestCommitted()).toBeNull();
      const w = sink.createWriter();
      await w.open(runtimeContext({ runId: 'run-a' }), []);
      for (let i = 0; i < 5; i++) w.write({ v: `r${i}` });
      const c1 = w.preCommit(1)!;
      expect(w.preCommit(2)).toBeNull(); // nothing written since
      expect(await c.xlen(out)).toBe(0); // nothing visible before the commit
      // the same commit repeated at once on one writer (one connection, where WATCH lives)
      await Promise.all([w.commit([c1]), w.commit([c1]), w.commit([c1])]);
      await w.commit([c1]);
      expect(await c.xlen(out)).toBe(5);
      // a later run restored from the checkpoint commits the same committable: nothing new
      const again = sink.createWriter();
      await again.open(runtimeContext({ runId: 'run-b' }), [c1]);
      await again.commit([c1]);
      expect((await c.xrange(out, '-', '+')).map(([, f]) => f[1])).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
      // the same checkpoint of another run is another transaction
      again.write({ v: 'b0' });
      await again.commit([again.preCommit(1)!]);
      expect(await c.xlen(out)).toBe(6);
      again.write({ v: 'b1' });
      await again.commit([again.preCommit(7)!]);
      expect(await sink.newestCommitted()).toBe(7);
      w.close!();
      again.close!();
    } finally {
      await cleanup(c, prefix);
    }
  });

  it('routes records by a key function; two writers committing concurrently both land', async () => {
    const prefix = uniquePrefix('route');
    try {
      const sink = new RedisStreamSink<{ k: string; v: number }>({ key: (r) => `${prefix}:${r.k}`, id: `${prefix}:out`, toFields: (r) => ({ v: r.v }) });
      const a = sink.createWriter();
      const b = sink.createWriter();
      await a.open(runtimeContext({ subtask: 0, runId: 'r' }), []);
      await b.open(runtimeContext({ subtask: 1, runId: 'r' }), []);
      for (let i = 0; i < 100; i++) (i % 2 ? a : b).write({ k: i % 3 === 0 ? 'x' : 'y', v: i });
      const ca = a.preCommit(1)!;
      const cb = b.preCommit(1)!;
      await Promise.all([a.commit([ca]), b.commit([cb]), a.commit([ca])]);
      expect((await c.xlen(`${prefix}:x`)) + (await c.xlen(`${prefix}:y`))).toBe(100);
      expect(await c.xlen(`${prefix}:x`)).toBe(34);
      a.close!();
      b.close!();
    } finally {
      await cleanup(c, prefix);
    }
  });

  it('checks its options, naming the one at fault', () => {
    expect(() => new RedisStreamSink({ key: '' })).toThrow(ConfigError);
    expect(() => new RedisStreamSink<string>({ key: (r) => r })).toThrow(/RedisStreamSink.id: is required/);
    expect(() => new RedisStreamSink({ key: 'k', connection: { port: 70_000 } })).toThrow(/RedisStreamSink.connection: Redis port 70000/);
    expect(() => new RedisStreamSink({ key: 'k', connection: { url: 'http://x' } })).toThrow(/must start with redis:\/\//);
  });
});
