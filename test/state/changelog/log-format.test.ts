import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/core/errors.ts';
import { encodeValue, decodeValue } from '../../../src/state/codec.ts';
import { changeValue, decodeItem, readSegment } from '../../../src/state/changelog/log-format.ts';

/** Every change of a segment with its value decoded. */
function decodeSegment(bytes: Uint8Array, label: string) {
  return readSegment(bytes, label).map((c) => ({ ...c, value: changeValue(c) }));
}
import { ChangelogWriter } from '../../../src/state/changelog/log-writer.ts';

function twoBatches(): { writer: ChangelogWriter; bytes: Uint8Array; firstLength: number } {
  const writer = new ChangelogWriter(10);
  const count = writer.stateId('count', 'value');
  const items = writer.stateId('items', 'list');
  const index = writer.stateId('index', 'map');
  writer.append('set', count, 3, 'a', 41, undefined);
  writer.append('append', items, 7, 42, { x: [1, 2] }, undefined);
  writer.append('mapPut', index, 3, 'a', 'v', 'k');
  const first = writer.seal()!;
  writer.append('mapRemove', index, 3, 'a', undefined, 'k');
  writer.append('clear', count, 3, 'a', undefined, undefined);
  writer.append('set', count, 9, 12n ** 30n, new Uint8Array([1, 2, 3]), undefined);
  const second = writer.seal()!;
  const bytes = new Uint8Array(first.bytes.byteLength + second.bytes.byteLength);
  bytes.set(first.bytes);
  bytes.set(second.bytes, first.bytes.byteLength);
  return { writer, bytes, firstLength: first.bytes.byteLength };
}

describe('changelog format', () => {
  it('round-trips every op, with sequence numbers and state kinds', () => {
    const { bytes } = twoBatches();
    const changes = decodeSegment(bytes, 'seg');
    expect(changes.map((c) => [c.seq, c.op, c.state, c.kind, c.keyGroup, c.key, c.value, c.mapKey])).toEqual([
      [10, 'set', 'count', 'value', 3, 'a', 41, undefined],
      [11, 'append', 'items', 'list', 7, 42, { x: [1, 2] }, undefined],
      [12, 'mapPut', 'index', 'map', 3, 'a', 'v', 'k'],
      [13, 'mapRemove', 'index', 'map', 3, 'a', undefined, 'k'],
      [14, 'clear', 'count', 'value', 3, 'a', undefined, undefined],
      [15, 'set', 'count', 'value', 9, 12n ** 30n, new Uint8Array([1, 2, 3]), undefined],
    ]);
  });

  it('seals nothing when nothing changed, and grows its buffer past the initial size', () => {
    const writer = new ChangelogWriter();
    expect(writer.seal()).toBeNull();
    const id = writer.stateId('big', 'value');
    const value = 'x'.repeat(100_000);
    writer.append('set', id, 0, 'k', value, undefined);
    writer.append('set', id, 1, 'k', value, undefined);
    const batch = writer.seal()!;
    expect([batch.fromSeq, batch.toSeq]).toEqual([0, 2]);
    expect(decodeSegment(batch.bytes, 'seg').map((c) => c.value)).toEqual([value, value]);
  });

  it('names the segment and the batch of a torn tail', () => {
    const { bytes, firstLength } = twoBatches();
    for (const cut of [bytes.byteLength - 1, firstLength + 5]) {
      const torn = bytes.subarray(0, cut);
      expect(() => decodeSegment(torn, 'taskowned/seg-1')).toThrowError(/taskowned\/seg-1: changelog batch 1 at byte \d+: torn/);
    }
  });

  it('detects a flipped byte anywhere in a batch body', () => {
    const { bytes, firstLength } = twoBatches();
    for (const at of [14, firstLength - 1, firstLength + 20]) {
      const flipped = bytes.slice();
      flipped[at]! ^= 0x10;
      let error: unknown;
      try {
        decodeSegment(flipped, 'seg');
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).code).toBe('CORRUPT_FILE');
      expect((error as StorageError).message).toMatch(/seg: changelog batch [01] at byte \d+: checksum mismatch/);
    }
  });

  it('refuses a batch of an unknown format version and a gap in sequence numbers', () => {
    const { bytes, firstLength } = twoBatches();
    const newer = bytes.slice();
    newer[3] = 2;
    expect(() => decodeSegment(newer, 'seg')).toThrowError(/changelog format version 2/);
    const second = bytes.subarray(firstLength);
    const gap = new Uint8Array(firstLength * 2);
    gap.set(bytes.subarray(0, firstLength));
    gap.set(bytes.subarray(0, firstLength), firstLength);
    expect(() => decodeSegment(gap, 'seg')).toThrowError(/starts at change 10, expected 13/);
    expect(decodeSegment(second, 'seg')[0]!.seq).toBe(13);
  });

  it('reads keys in place exactly as the codec decodes them, at every integer width and beyond', () => {
    const keys: unknown[] = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
    keys.push(-1, -32, -33, -128, -129, -32_769, -(2 ** 31) - 1, 0.5, -2.25, 1e300, '', 'k', 'a longer key of text', 2n ** 70n, -(2n ** 63n), true, null);
    for (const key of keys) {
      const bytes = encodeValue(key);
      // at an offset inside a larger body, as in a segment
      const body = new Uint8Array(bytes.byteLength + 7);
      body.set(bytes, 3);
      expect(decodeItem(body, 3, bytes.byteLength), String(key)).toStrictEqual(decodeValue(bytes));
      expect(decodeItem(body, 3, bytes.byteLength), String(key)).toStrictEqual(key);
    }
  });
});
