/**
 * Frames over a stream socket (TCP, or TLS over it): each frame is a u32 big-endian length, then
 * that many bytes. The handshake (handshake.ts) and the protocol link (socket-link.ts) both speak
 * frames; the frame handler is replaceable at any moment, so a handshake hands the socket to the
 * link without losing a byte. Writes of one event-loop turn leave in one syscall, as portLink
 * posts one message per turn: the first write of a turn corks the socket, a microtask uncorks it.
 */
import type { Socket } from 'node:net';
import { assert } from '../../core/assert.ts';
import { ClusterError, ProtocolError } from '../../core/errors.ts';
import { formatAddress } from './address.ts';
import { FRAME_HEADER_BYTES, FrameParser } from './frame-parser.ts';

/** The largest frame accepted by default: garbage read as a length (an HTTP request's "GET ") is far larger. */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** What a u32 length prefix can say. */
const MAX_U32 = 0xffff_ffff;
/** Frames up to this size are copied into the turn's batch (a socket write costs more than copying them); larger ones are written as they are. */
const COALESCE_MAX_BYTES = 4096;
/** The first batch buffer of a turn (a slice of Node's shared pool), and the size the next ones double up to. */
const BATCH_MIN_BYTES = 2048;
const BATCH_MAX_BYTES = 64 * 1024;
/** TCP keep-alive probes start after this much silence, so a vanished host is noticed without traffic. */
const KEEP_ALIVE_DELAY_MS = 10_000;

/**
 * One connection that carries frames. A frame handed to the handler is either a view into a chunk
 * the socket delivered (a frame whole inside one chunk) or a buffer of its own at offset 0 (a frame
 * that spanned chunks). Its bytes never change afterwards, so the handler may keep it, but a kept
 * view pins its whole chunk and does not start at offset 0: `frame.slice()` when that matters
 * (decodeMessage copies binary fields out, so the decoder needs no copy).
 */
export interface FramedSocket {
  /** The peer's address, `host:port`. */
  readonly remote: string;
  /** Bytes written to the socket, length prefixes included (plaintext bytes under TLS). */
  readonly bytesSent: number;
  /** Bytes read from the socket, length prefixes included. */
  readonly bytesReceived: number;
  readonly framesSent: number;
  readonly framesReceived: number;
  /** Bytes written but not yet taken by the kernel (a peer that reads slowly makes it grow). */
  readonly bufferedBytes: number;
  /** The largest frame accepted from the peer (and allowed to be written); a larger length prefix closes the connection. */
  maxFrameBytes: number;
  /** Whether the connection ended or is ending: writes are dropped, frames no longer delivered. */
  readonly closed: boolean;
  /**
   * Sets THE handler of incoming frames, replacing the previous one, also from inside a handler
   * call: the next frame goes to the new one. With none (null, or before the first call) frames
   * queue and the socket stops reading, until a handler is set.
   */
  onFrame(handler: ((frame: Uint8Array) => void) | null): void;
  /**
   * Writes one frame; frames written in one turn of the event loop leave together (one writev).
   * Dropped after close() or end().
   * @throws ProtocolError when the frame is larger than maxFrameBytes (the peer would refuse it).
   */
  write(frame: Uint8Array): void;
  /**
   * Sets THE handler of the end of the connection, called exactly once whatever ended it (later
   * when it has not ended yet, at once when it has): null when this side ended it with close() or
   * end(), else the reason: a ProtocolError for a frame over the limit or undecodable bytes, a
   * ClusterError CLUSTER_CONNECTION_LOST when the peer closed or the connection broke.
   */
  onClose(handler: ((error: Error | null) => void) | null): void;
  /** Sends what was written, then closes this side; frames still arriving are delivered until the peer closes too. */
  end(): void;
  /** Destroys the connection at once (what was written this turn is dropped); `error` is what onClose reports. */
  close(error?: Error): void;
}

/**
 * Frames over a connected socket (plain or TLS). Turns Nagle off (the per-turn cork already
 * batches small frames) and keep-alive on.
 * @param opts.name how messages name the peer (a task manager, a host name), beside its address.
 */
export function framedSocket(socket: Socket, opts?: { maxFrameBytes?: number; name?: string }): FramedSocket {
  return new FramedConnection(socket, opts?.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, opts?.name ?? null);
}

/** A socket speaking frames: the parser on the read side, the per-turn cork on the write side. */
class FramedConnection implements FramedSocket {
  readonly remote: string;
  bytesSent = 0;
  bytesReceived = 0;
  framesSent = 0;
  framesReceived = 0;
  private limit = 0;
  private readonly label: string;
  private readonly parser: FrameParser;
  private handler: ((frame: Uint8Array) => void) | null = null;
  private closeHandler: ((error: Error | null) => void) | null = null;
  /** Frames received while no handler was set or while one was running. */
  private queue: Uint8Array[] = [];
  private queueHead = 0;
  private delivering = false;
  private corked = false;
  /** This turn's small frames, copied together; [batchStart, batchEnd) is not written yet. */
  private batch: Buffer | null = null;
  private batchStart = 0;
  private batchEnd = 0;
  /** The size of the turn's next batch buffer: small for a turn of one message, doubling for a busy one. */
  private nextBatchBytes = BATCH_MIN_BYTES;
  /** close() or end() was called, or the socket closed: nothing more is written. */
  private stopped = false;
  /** Why the connection ends, once known (undefined: this side ended it, or not ended yet). */
  private failure: Error | undefined = undefined;
  private ended = false;
  private reported = false;

  constructor(
    private readonly socket: Socket,
    maxFrameBytes: number,
    name: string | null,
  ) {
    this.maxFrameBytes = maxFrameBytes;
    const { remoteAddress, remotePort } = socket;
    this.remote = remoteAddress !== undefined && remotePort !== undefined ? formatAddress(remoteAddress, remotePort) : (name ?? 'unknown peer');
    this.label = name !== null && name !== this.remote ? `${name} (${this.remote})` : this.remote;
    this.parser = new FrameParser({
      frame: (frame) => this.received(frame),
      oversize: (bytes) => this.close(this.oversize(bytes)),
      limit: () => this.limit,
    });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    socket.on('data', (chunk: Buffer) => {
      this.bytesReceived += chunk.byteLength;
      this.parser.push(chunk);
    });
    socket.on('end', () => this.peerEnded());
    socket.on('error', (err) => {
      this.failure ??= new ClusterError('CLUSTER_CONNECTION_LOST', this.label, `connection broke: ${err.message}`, { cause: err });
    });
    socket.on('close', () => this.finished());
    socket.pause(); // no handler yet
    if (socket.destroyed) queueMicrotask(() => this.finished());
  }

  get maxFrameBytes(): number {
    return this.limit;
  }

  set maxFrameBytes(bytes: number) {
    assert(Number.isInteger(bytes) && bytes > 0 && bytes <= MAX_U32, () => `maxFrameBytes must be an integer in 1..${MAX_U32}, got ${bytes}`);
    this.limit = bytes;
  }

  get bufferedBytes(): number {
    return this.socket.writableLength;
  }

  get closed(): boolean {
    return this.stopped;
  }

  onFrame(handler: ((frame: Uint8Array) => void) | null): void {
    this.handler = handler;
    if (handler === null) {
      this.socket.pause();
      return;
    }
    this.socket.resume();
    if (this.queueHead < this.queue.length && !this.delivering) queueMicrotask(() => this.drain());
  }

  write(frame: Uint8Array): void {
    if (this.stopped) return;
    const bytes = frame.byteLength;
    if (bytes > this.limit)
      throw new ProtocolError(
        'body',
        null,
        null,
        `${this.label}: a frame of ${bytes} bytes cannot be sent: over the limit of ${this.limit} bytes (maxFrameBytes)`,
      );
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      queueMicrotask(this.uncork);
    }
    if (bytes <= COALESCE_MAX_BYTES) this.append(frame);
    else {
      this.flushBatch();
      const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
      header.writeUInt32BE(bytes, 0);
      this.socket.write(header);
      this.socket.write(frame);
    }
    this.bytesSent += FRAME_HEADER_BYTES + bytes;
    this.framesSent++;
  }

  onClose(handler: ((error: Error | null) => void) | null): void {
    this.closeHandler = handler;
    if (this.ended && !this.reported && handler !== null) queueMicrotask(() => this.report());
  }

  end(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.flushBatch();
    this.socket.end(); // uncorks: what this turn wrote goes first
  }

  close(error?: Error): void {
    if (error !== undefined) this.failure ??= error;
    this.stopped = true;
    this.parser.stop();
    this.dropQueue();
    this.socket.destroy();
  }

  private readonly uncork = (): void => {
    this.corked = false;
    if (this.socket.destroyed) return;
    this.flushBatch();
    this.batch = null; // the socket may still hold what was written of it
    this.nextBatchBytes = BATCH_MIN_BYTES;
    this.socket.uncork();
  };

  /** Copies a small frame, with its length, after the previous ones of this turn: one socket write for many. */
  private append(frame: Uint8Array): void {
    const total = FRAME_HEADER_BYTES + frame.byteLength;
    if (this.batch === null || this.batch.byteLength - this.batchEnd < total) {
      this.flushBatch();
      this.batch = Buffer.allocUnsafe(Math.max(total, this.nextBatchBytes));
      this.nextBatchBytes = Math.min(BATCH_MAX_BYTES, this.nextBatchBytes * 2);
      this.batchStart = 0;
      this.batchEnd = 0;
    }
    this.batch.writeUInt32BE(frame.byteLength, this.batchEnd);
    this.batch.set(frame, this.batchEnd + FRAME_HEADER_BYTES);
    this.batchEnd += total;
  }

  /** Writes what was appended since the last flush (bytes handed to the socket are never touched again). */
  private flushBatch(): void {
    if (this.batch === null || this.batchEnd === this.batchStart) return;
    this.socket.write(this.batch.subarray(this.batchStart, this.batchEnd));
    this.batchStart = this.batchEnd;
  }

  private received(frame: Uint8Array): void {
    this.framesReceived++;
    if (this.handler !== null && !this.delivering && this.queueHead === this.queue.length) {
      this.delivering = true;
      try {
        this.handler(frame);
      } finally {
        this.delivering = false;
      }
      return;
    }
    this.queue.push(frame);
    this.drain();
  }

  /** Hands queued frames, oldest first, to whichever handler is current at each frame. */
  private drain(): void {
    if (this.delivering) return;
    this.delivering = true;
    try {
      while (this.queueHead < this.queue.length && this.handler !== null && !this.ended) {
        const frame = this.queue[this.queueHead]!;
        this.queue[this.queueHead++] = EMPTY;
        this.handler(frame);
      }
    } finally {
      this.delivering = false;
    }
    if (this.queueHead === this.queue.length) this.dropQueue();
  }

  private dropQueue(): void {
    this.queue = [];
    this.queueHead = 0;
  }

  private peerEnded(): void {
    if (this.stopped) return; // our end() or close() came first
    this.stopped = true; // Node ends this side too (no half-open connections): a write would fail
    const partial = this.parser.partial();
    this.failure ??= new ClusterError(
      'CLUSTER_CONNECTION_LOST',
      this.label,
      partial === null ? 'the peer closed the connection' : `the peer closed the connection in the middle of a frame (${partial} received)`,
    );
  }

  private finished(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopped = true;
    this.parser.stop();
    this.dropQueue();
    this.report();
  }

  private report(): void {
    if (this.reported || this.closeHandler === null) return;
    this.reported = true;
    this.closeHandler(this.failure ?? null);
  }

  private oversize(bytes: number): ProtocolError {
    return new ProtocolError(
      'body',
      null,
      null,
      `${this.label}: a frame of ${bytes} bytes announced, over the limit of ${this.limit} bytes (maxFrameBytes): the peer is not a Weir process of this protocol, or sent a message too large`,
    );
  }
}

const EMPTY = new Uint8Array(0);
