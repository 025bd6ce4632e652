/**
 * A growable byte buffer that writes msgpack values from pieces already msgpack-encoded (keys and
 * values as the embedded backend stores them). msgpack is self-delimiting, so an array is its
 * header followed by its encoded elements: a snapshot can copy stored bytes into a section instead
 * of decoding and re-encoding every entry.
 */
import { encodeValue } from '../codec.ts';

/** Appends msgpack pieces into one growing buffer. */
export class ByteSink {
  private bytes = new Uint8Array(4096);
  private view = new DataView(this.bytes.buffer);
  length = 0;

  private ensure(extra: number): void {
    const need = this.length + extra;
    if (need <= this.bytes.byteLength) return;
    let size = this.bytes.byteLength * 2;
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  /** Bytes that are one complete msgpack value. */
  raw(piece: Uint8Array): void {
    this.ensure(piece.byteLength);
    this.bytes.set(piece, this.length);
    this.length += piece.byteLength;
  }

  /**
   * Bytes [start, end) of `source`, copied without making a view of them: a view per entry cost more
   * than the copy (a snapshot's store keys past their prefix, values in lmdb's reusable buffer).
   */
  rawRange(source: Uint8Array, start: number, end: number): void {
    this.ensure(end - start);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = start; i < end; i++) bytes[at++] = source[i]!;
    this.length = at;
  }

  value(v: unknown): void {
    this.raw(encodeValue(v));
  }

  arrayHeader(count: number): void {
    this.header(count, 0x90, 0xdc, 0xdd);
  }

  mapHeader(count: number): void {
    this.header(count, 0x80, 0xde, 0xdf);
  }

  private header(count: number, fix: number, h16: number, h32: number): void {
    this.ensure(5);
    if (count < 16) {
      this.bytes[this.length++] = fix | count;
    } else if (count < 0x10000) {
      this.bytes[this.length] = h16;
      this.view.setUint16(this.length + 1, count);
      this.length += 3;
    } else {
      this.bytes[this.length] = h32;
      this.view.setUint32(this.length + 1, count);
      this.length += 5;
    }
  }

  /** What was written, without a copy: valid until the next write or `clear`. */
  written(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** Empties the sink, keeping its buffer for reuse. */
  clear(): void {
    this.length = 0;
  }

  /** A copy of what was written. */
  take(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}
