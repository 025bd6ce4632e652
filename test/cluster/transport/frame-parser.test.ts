/**
 * The frame parser alone (no socket): frames come out whole and in order however the bytes are
 * cut into chunks (every split point of a stream, one byte at a time, many frames per chunk); a
 * frame whole inside a chunk is a view of it, one spanning chunks a buffer of its own; an
 * over-long length stops parsing; a partial frame is described.
 */
import { describe, expect, it } from 'vitest';
import { FrameParser } from '../../../src/cluster/transport/frame-parser.ts';

function framed(frames: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(frames.reduce((n, f) => n + 4 + f.byteLength, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const f of frames) {
    view.setUint32(at, f.byteLength);
    out.set(f, at + 4);
    at += 4 + f.byteLength;
  }
  return out;
}

function collector(limit = 1 << 20): { parser: FrameParser; frames: Uint8Array[]; oversize: number[] } {
  const frames: Uint8Array[] = [];
  const oversize: number[] = [];
  const parser = new FrameParser({ frame: (f) => frames.push(f), oversize: (n) => oversize.push(n), limit: () => limit });
  return { parser, frames, oversize };
}

const FRAMES = [Uint8Array.of(1, 2, 3), new Uint8Array(0), Uint8Array.from({ length: 300 }, (_, i) => i % 251), Uint8Array.of(9)];

describe('FrameParser', () => {
  it('gives the same frames for every split of the stream into two and three chunks', () => {
    const bytes = framed(FRAMES);
    for (let i = 0; i <= bytes.length; i++) {
      for (const j of [i, Math.min(bytes.length, i + 1), Math.min(bytes.length, i + 5), bytes.length]) {
        const { parser, frames } = collector();
        parser.push(bytes.slice(0, i));
        parser.push(bytes.slice(i, j));
        parser.push(bytes.slice(j));
        expect(
          frames.map((f) => [...f]),
          `split at ${i} and ${j}`,
        ).toEqual(FRAMES.map((f) => [...f]));
      }
    }
  });

  it('gives the same frames fed one byte at a time', () => {
    const bytes = framed(FRAMES);
    const { parser, frames } = collector();
    for (let i = 0; i < bytes.length; i++) parser.push(bytes.subarray(i, i + 1));
    expect(frames.map((f) => [...f])).toEqual(FRAMES.map((f) => [...f]));
    for (const f of frames.filter((f) => f.byteLength > 0)) {
      expect(f.byteOffset).toBe(0); // spanned chunks: a buffer of its own
      expect(f.buffer.byteLength).toBe(f.byteLength);
    }
  });

  it('hands a frame whole inside one chunk over as a view of it, many frames per chunk', () => {
    const many = Array.from({ length: 1000 }, (_, i) => Uint8Array.of(i & 0xff, i >> 8));
    const chunk = framed(many);
    const { parser, frames } = collector();
    parser.push(chunk);
    expect(frames).toHaveLength(1000);
    expect(frames.every((f) => f.buffer === chunk.buffer)).toBe(true);
    expect(frames.every((f, i) => (f[0]! | (f[1]! << 8)) === i)).toBe(true);
  });

  it('stops at a length over the limit, reporting it, and ignores what follows', () => {
    const { parser, frames, oversize } = collector(100);
    parser.push(framed([new Uint8Array(100), new Uint8Array(101), new Uint8Array(5)]));
    expect(frames.map((f) => f.byteLength)).toEqual([100]);
    expect(oversize).toEqual([101]);
    parser.push(framed([new Uint8Array(1)]));
    expect(frames).toHaveLength(1);
  });

  it('describes a frame received in part', () => {
    const { parser } = collector();
    expect(parser.partial()).toBeNull();
    parser.push(Uint8Array.of(0, 0));
    expect(parser.partial()).toBe('2 bytes of a 4-byte length prefix');
    parser.push(Uint8Array.of(0, 10, 1, 2, 3));
    expect(parser.partial()).toBe('7 of 14 bytes');
  });
});
