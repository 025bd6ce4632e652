import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../src/core/assert.ts';
import { checkpointId } from '../../src/core/ids.ts';
import { sharedPathsOf } from '../../src/checkpoint/metadata/walk.ts';
import { SharedStateRegistry } from '../../src/storage/shared-registry.ts';
import { inlineHandleFor } from '../../src/storage/state-file.ts';
import { patternBytes, sampleMetadata } from './fixtures.ts';

const c = checkpointId;

describe('SharedStateRegistry', () => {
  it('counts references and releases a file only when its count reaches zero', () => {
    const r = new SharedStateRegistry();
    r.register(c(1), ['a', 'b']);
    r.register(c(2), ['b', 'c']);
    r.register(c(3), ['b', 'c', 'd']);
    expect(Object.fromEntries(r.counts())).toEqual({ a: 1, b: 3, c: 2, d: 1 });
    expect(r.release(c(1))).toEqual(['a']);
    expect(r.release(c(3))).toEqual(['d']);
    expect(Object.fromEntries(r.counts())).toEqual({ b: 1, c: 1 });
    expect(r.release(c(2)).sort()).toEqual(['b', 'c']);
    expect(r.counts().size).toBe(0);
    expect(r.checkpoints()).toEqual([]);
  });

  it('counts a path listed twice by one checkpoint once', () => {
    const r = new SharedStateRegistry();
    r.register(c(1), ['a', 'a']);
    r.register(c(2), ['a']);
    expect(r.counts().get('a')).toBe(2);
    expect(r.registeredFor(c(1))).toEqual(['a']);
    expect(r.release(c(1))).toEqual([]);
    expect(r.release(c(2))).toEqual(['a']);
  });

  it('releases nothing for an unknown or already released checkpoint', () => {
    const r = new SharedStateRegistry();
    r.register(c(1), ['a']);
    r.register(c(2), ['a']);
    expect(r.release(c(7))).toEqual([]);
    expect(r.release(c(1))).toEqual([]);
    expect(r.release(c(1))).toEqual([]);
    expect(r.counts().get('a')).toBe(1);
    expect(r.registeredFor(c(1))).toEqual([]);
  });

  it('refuses to register a checkpoint twice', () => {
    const r = new SharedStateRegistry();
    r.register(c(1), ['a']);
    expect(() => r.register(c(1), ['b'])).toThrow(AssertionError);
    expect(r.registeredFor(c(1))).toEqual(['a']);
  });

  it('does not expose its internal counts for mutation', () => {
    const r = new SharedStateRegistry();
    r.register(c(1), ['a']);
    (r.counts() as Map<string, number>).set('a', 99);
    expect(r.counts().get('a')).toBe(1);
  });

  it('never releases a path while some registered checkpoint refers to it (random histories)', () => {
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let run = 0; run < 50; run++) {
      const r = new SharedStateRegistry();
      const live = new Map<number, string[]>();
      const deleted = new Set<string>();
      for (let id = 1; id <= 40; id++) {
        const paths = Array.from({ length: rand(5) }, () => `f${rand(12)}`).filter((p) => !deleted.has(p));
        r.register(c(id), paths);
        live.set(id, paths);
        if (rand(2) === 0 && live.size > 0) {
          const ids = [...live.keys()];
          const victim = ids[rand(ids.length)]!;
          live.delete(victim);
          for (const p of r.release(c(victim))) {
            expect([...live.values()].some((ps) => ps.includes(p))).toBe(false);
            deleted.add(p);
          }
        }
      }
      for (const id of [...live.keys()]) for (const p of r.release(c(id))) deleted.add(p);
      expect(r.counts().size).toBe(0);
    }
  });

  it('sharedPathsOf picks the file handles inside the shared folder', () => {
    const meta = sampleMetadata({
      id: 2,
      keyed: [
        { type: 'file', path: '/ck/job/shared/s-1', size: 1, checksum: 0 },
        { type: 'file', path: '/ck/job/chk-2/k-1', size: 1, checksum: 0 },
        { type: 'file', path: '/ck/job/shared/s-1', size: 1, checksum: 0 },
        inlineHandleFor(patternBytes(3)),
        { type: 'file', path: '/ck/job/sharedx/s-2', size: 1, checksum: 0 },
      ],
    });
    expect(sharedPathsOf(meta, '/ck/job/shared')).toEqual(['/ck/job/shared/s-1']);
  });
});
