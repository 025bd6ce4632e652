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
    expect(store.get(keyOf(99))).toBeUndefined();
  });

  it('get hands out copies: each keeps its bytes through every later read, small and larger than lmdb’s reusable buffer', () => {
    const store = openStore();
    const values: unknown[] = ['s'.repeat(100), 'x'.repeat(300_000), 42, 'b'.repeat(70_000), 't'.repeat(100)];
    const keyOf = (i: number) => Buffer.from([0, 3, 0, 1, i]);
    store.write(values.map((v, i) => [keyOf(i), encodeValue(v)] as const));
    const got = values.map((_, i) => store.get(keyOf(i))!);
    for (let i = 0; i < values.length; i++) store.read(keyOf(i), decodeValue);
    expect(got.map((b) => decodeValue(b))).toEqual(values);
  });
});

describe('local store chunks', () => {
  it('scanChunk pages through a range in key order, `after` exclusive, at most `limit` entries, each value its first `length` bytes', () => {
    const store = openStore();
    const keyOf = (i: number) => Buffer.from([0, 2, 0, 1, i]);
    const large = Buffer.alloc(100_000, 5); // past lmdb's threshold for a buffer of its own
    const huge = Buffer.alloc(20_000_000, 6); // past lmdb's 16 MB reusable read buffer
    store.write([
      [Buffer.from([0, 2, 0, 0, 9]), Buffer.from('before')],
      ...Array.from({ length: 10 }, (_, i) => [keyOf(i * 2), i === 4 ? large : i === 7 ? huge : Buffer.from(`v${i * 2}`)] as const),
      [Buffer.from([0, 2, 0, 2, 0]), Buffer.from('after')],
    ]);
    const [start, end] = [Buffer.from([0, 2, 0, 1]), Buffer.from([0, 2, 0, 2])];
    const chunks: string[][] = [];
    for (let after: Buffer | null = null; ; ) {
      const chunk: string[] = [];
      const last = store.scanChunk(start, end, 3, after, (key, value, length) => {
        const bytes = Buffer.from(value.subarray(0, length));
        chunk.push(`${key[4]}=${bytes.equals(large) ? 'large' : bytes.equals(huge) ? 'huge' : bytes.toString()}`);
      });
      chunks.push(chunk);
      if (last !== null) after = last;
      expect(last === null ? null : last[4]).toBe(chunk.length === 0 ? null : Number(chunk.at(-1)!.split('=')[0]));
      if (chunk.length < 3) break;
    }
    expect(chunks.map((c) => c.length)).toEqual([3, 3, 3, 1]);
    expect(chunks.flat()).toEqual(Array.from({ length: 10 }, (_, i) => `${i * 2}=${i === 4 ? 'large' : i === 7 ? 'huge' : `v${i * 2}`}`));
    // `after` between keys (not itself stored) starts at the next key.
    const next: number[] = [];
    store.scanChunk(start, end, 2, keyOf(5), (key) => void next.push(key[4]!));
    expect(next).toEqual([6, 8]);
  });

  it('scanChunk leaves reads after it as before, also when its visitor throws', () => {
    const store = openStore();
    const key = Buffer.from([0, 2, 0, 1, 1]);
    store.write([[key, Buffer.from('value')]]);
    const [start, end] = [Buffer.from([0, 2, 0, 1]), Buffer.from([0, 2, 0, 2])];
    expect(() =>
      store.scanChunk(start, end, 10, null, () => {
        throw new Error('visitor failed');
      }),
    ).toThrow('visitor failed');
    // A cursor afterwards hands out values of their own again, unchanged by later reads into lmdb's buffer.
    store.write([[Buffer.from([0, 2, 0, 1, 2]), Buffer.from('second')]]);
    const cursor = store.cursor(start, end);
    const first = cursor.peek()!;
    expect(store.read(Buffer.from([0, 2, 0, 1, 2]), (b) => Buffer.from(b).toString())).toBe('second');
    cursor.advance();
    expect(cursor.peek()!.value.toString()).toBe('second');
    cursor.close();
    expect(first.value.toString()).toBe('value');
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
