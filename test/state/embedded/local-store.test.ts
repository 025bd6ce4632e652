import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../../src/state/codec.ts';
import { LocalStore } from '../../../src/state/embedded/local-store.ts';

const opened: Array<{ store: LocalStore; root: string }> = [];
afterEach(() => {
  for (const { store, root } of opened.splice(0)) {
    store.close();
    rmSync(root, { recursive: true, force: true });
  }
});

function openStore(): LocalStore {
  const root = mkdtempSync(join(tmpdir(), 'weir-local-store-'));
  const store = LocalStore.create(root, 'read-test');
  opened.push({ store, root });
  return store;
}

describe('local store reads', () => {
  it('read and getLatin1 give exactly the stored bytes of each key, small and larger than lmdb’s reusable buffer, one after another', () => {
    const store = openStore();
    const values: unknown[] = [1, 'a', [1, 2, 3], 'x'.repeat(300_000), { n: 7 }, 2 ** 40, 'b'.repeat(70_000), 0];
    const keyOf = (i: number) => Buffer.from([0, 1, 0, 1, i]);
    store.write(values.map((v, i) => [keyOf(i), encodeValue(v)] as const));
    // Longest first, then shorter: a read that kept the previous length would decode trailing bytes.
    for (const i of [3, 6, 0, 2, 1, 5, 4, 7, 3, 1]) {
      expect(store.read(keyOf(i), decodeValue), `key ${i}`).toEqual(values[i]);
      expect(store.read(keyOf(i), decodeValue)).toEqual(decodeValue(store.get(keyOf(i))!));
      expect(Buffer.from(store.getLatin1(keyOf(i))!, 'latin1').equals(Buffer.from(store.get(keyOf(i))!))).toBe(true);
    }
    expect(store.read(keyOf(99), decodeValue)).toBeUndefined();
    expect(store.getLatin1(keyOf(99))).toBeUndefined();
  });
});

describe('local store chunks', () => {
  it('readChunk pages through a range in key order, `after` exclusive, at most `limit` entries, stable copies', () => {
    const store = openStore();
    const keyOf = (i: number) => Buffer.from([0, 2, 0, 1, i]);
    store.write([
      [Buffer.from([0, 2, 0, 0, 9]), Buffer.from('before')],
      ...Array.from({ length: 10 }, (_, i) => [keyOf(i * 2), Buffer.from(`v${i * 2}`)] as const),
      [Buffer.from([0, 2, 0, 2, 0]), Buffer.from('after')],
    ]);
    const [start, end] = [Buffer.from([0, 2, 0, 1]), Buffer.from([0, 2, 0, 2])];
    const seen: string[] = [];
    const chunks: Array<Array<{ key: Buffer; value: Buffer }>> = [];
    for (let after: Buffer | null = null; ; ) {
      const chunk = store.readChunk(start, end, 3, after);
      chunks.push(chunk);
      if (chunk.length > 0) after = chunk[chunk.length - 1]!.key;
      if (chunk.length < 3) break;
    }
    // Writes after a chunk was read do not change it.
    store.write([[keyOf(0), Buffer.from('changed')]]);
    for (const c of chunks) for (const e of c) seen.push(`${e.key[4]}=${e.value.toString()}`);
    expect(chunks.map((c) => c.length)).toEqual([3, 3, 3, 1]);
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `${i * 2}=v${i * 2}`));
    // `after` between keys (not itself stored) starts at the next key.
    expect(store.readChunk(start, end, 2, keyOf(5)).map((e) => e.key[4])).toEqual([6, 8]);
  });
});

describe('local store map', () => {
  it.runIf(process.platform === 'linux')('keeps one memory map of its file as the file grows (lmdb-js leaves outgrown maps mapped)', () => {
    const store = openStore();
    const value = Buffer.alloc(100, 7);
    for (let batch = 0; batch < 20; batch++) {
      store.write(Array.from({ length: 1000 }, (_, i) => [Buffer.from([0, 3, 0, 1, batch, i >> 8, i & 0xff]), value] as const));
    }
    const file = join(store.dir, 'data.mdb');
    expect(statSync(file).size).toBeGreaterThan(2 * 1024 * 1024);
    const maps = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(file));
    expect(maps).toHaveLength(1);
  });
});
