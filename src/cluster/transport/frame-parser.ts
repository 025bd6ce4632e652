/**
 * The receiving half of length-prefixed framing, without I/O: bytes go in as the socket delivers
 * them (a frame split over many chunks, many frames in one chunk), frames come out. Each chunk is
 * walked once; bytes are copied only for a frame that spans chunks, into a buffer of exactly its
 * size, never by concatenating what was received.
 */

/** The bytes of the length prefix: a u32, big-endian. */
export const FRAME_HEADER_BYTES = 4;

/** Where frames and an over-long length go. */
export interface FrameSink {
  /** A complete frame (see FrameParser for what the bytes are). */
  frame(frame: Uint8Array): void;
  /** A length prefix over `limit()`: parsing has stopped for good. */
  oversize(bytes: number): void;
  /** The largest frame accepted, read at each length prefix (it may change between frames). */
  limit(): number;
}

/**
 * Splits a byte stream into frames. A frame that lies whole inside one chunk is handed over as a
 * view of that chunk (no copy); one that spans chunks gets a buffer of its own at offset 0. The
 * sink may keep either: a parser never writes into a chunk, and the socket never reuses one.
 */
export class FrameParser {
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  private headerFill = 0;
  private body: Uint8Array | null = null;
  private bodyFill = 0;
  private stopped = false;

  constructor(private readonly sink: FrameSink) {}

  /** Parses `chunk`; frames go to the sink as they complete (it may call stop() from there). */
  push(chunk: Uint8Array): void {
    const end = chunk.byteLength;
    let pos = 0;
    while (pos < end && !this.stopped) {
      if (this.body !== null) {
        pos = this.fillBody(chunk, pos);
        continue;
      }
      let length: number;
      if (this.headerFill === 0 && end - pos >= FRAME_HEADER_BYTES) {
        length = readU32(chunk, pos);
        pos += FRAME_HEADER_BYTES;
      } else {
        const n = Math.min(end - pos, FRAME_HEADER_BYTES - this.headerFill);
        this.header.set(chunk.subarray(pos, pos + n), this.headerFill);
        this.headerFill += n;
        pos += n;
        if (this.headerFill < FRAME_HEADER_BYTES) return;
        length = readU32(this.header, 0);
        this.headerFill = 0;
      }
      if (length > this.sink.limit()) {
        this.stopped = true;
        this.sink.oversize(length);
        return;
      }
      if (end - pos >= length) {
        const frame = new Uint8Array(chunk.buffer, chunk.byteOffset + pos, length);
        pos += length;
        this.sink.frame(frame);
      } else {
        this.body = new Uint8Array(length);
        this.bodyFill = 0;
      }
    }
  }

  /** Ignores every byte from now on. */
  stop(): void {
    this.stopped = true;
    this.body = null;
  }

  /** The frame received in part, as `have of need bytes` (null between frames), for a connection that ends mid-frame. */
  partial(): string | null {
    if (this.body !== null) return `${FRAME_HEADER_BYTES + this.bodyFill} of ${FRAME_HEADER_BYTES + this.body.byteLength} bytes`;
    if (this.headerFill > 0) return `${this.headerFill} bytes of a ${FRAME_HEADER_BYTES}-byte length prefix`;
    return null;
  }

  private fillBody(chunk: Uint8Array, pos: number): number {
    const body = this.body!;
    const n = Math.min(chunk.byteLength - pos, body.byteLength - this.bodyFill);
    body.set(chunk.subarray(pos, pos + n), this.bodyFill);
    this.bodyFill += n;
    if (this.bodyFill === body.byteLength) {
      this.body = null;
      this.bodyFill = 0;
      this.sink.frame(body);
    }
    return pos + n;
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}
