/**
 * The two ends of a channel whose producer and consumer run in different task managers. The
 * producer's end queues elements and sends them as frames (element-codec.ts) only while it has
 * credit, one credit per data buffer; events (barriers, cancel markers, end of data/partition)
 * travel in the same ordered stream and take none. The consumer's end queues received elements and
 * gives credit back for the data buffers it hands on, a quarter of the window at a time (one
 * message per few buffers, while three quarters of the window still cover the round trip). An
 * unaligned barrier overtakes on both
 * ends: what the producer has not sent yet (returned by overtakeWith, the producer's in-flight
 * data) and, on arrival, what the consumer has received but not processed (takeOvertaken, the
 * consumer's in-flight data).
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointBarrier } from '../../checkpoint/barrier/barrier.ts';
import type { InflightElement } from '../../checkpoint/channel/buffer.ts';
import { isInflightElement, LocalChannel, type ChannelListener, type InputChannel, type OutputChannel } from './channel.ts';
import type { StreamElement } from '../elements.ts';
import { decodeElement, encodeElement } from './element-codec.ts';

/** Sends one frame; its buffer may be transferred (the sender keeps no reference to it). */
export type FrameSender = (frame: Uint8Array) => void;

export class RemoteOutputChannel implements OutputChannel {
  private queue: StreamElement[] = [];
  private head = 0;
  private unsentBuffers = 0;
  /** Data buffers the consumer can still take beyond those already sent. */
  private credit: number;
  private producer: ChannelListener | null = null;
  /** Nothing is sent before the consumer's end exists and has its restored data (see open). */
  private opened = false;
  /** Frames and bytes sent, for benchmarks and progress. */
  framesSent = 0;
  bytesSent = 0;

  constructor(
    readonly id: string,
    readonly capacityBuffers: number,
    private readonly send: FrameSender,
  ) {
    assert(capacityBuffers >= 1, `channel ${id}: capacity must be >= 1`);
    this.credit = capacityBuffers;
  }

  setProducer(listener: ChannelListener): void {
    this.producer = listener;
  }

  hasCredit(): boolean {
    return this.unsentBuffers < this.credit;
  }

  /** Elements waiting for credit (tests: bounded by the capacity). */
  get queued(): number {
    return this.queue.length - this.head;
  }

  push(element: StreamElement): void {
    this.queue.push(element);
    if (element.kind === 'buffer') this.unsentBuffers++;
    this.pump();
  }

  overtakeWith(barrier: CheckpointBarrier): InflightElement[] {
    const overtaken: InflightElement[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (isInflightElement(e)) overtaken.push(e);
    }
    if (this.head > 0) this.queue[--this.head] = barrier;
    else this.queue.unshift(barrier);
    this.pump();
    return overtaken;
  }

  /** Every task manager deployed its subtasks: the consumer's end is there; send what is queued (restored data first). */
  open(): void {
    this.opened = true;
    this.pump();
  }

  /** The consumer freed `buffers` buffers. */
  addCredit(buffers: number): void {
    const had = this.hasCredit();
    this.credit += buffers;
    this.pump();
    if (!had && this.hasCredit()) this.producer?.onAvailable();
  }

  private pump(): void {
    if (!this.opened) return;
    while (this.head < this.queue.length) {
      const e = this.queue[this.head]!;
      if (e.kind === 'buffer') {
        if (this.credit <= 0) return;
        this.credit--;
        this.unsentBuffers--;
      }
      this.queue[this.head++] = undefined as unknown as StreamElement;
      const frame = encodeElement(e);
      this.framesSent++;
      this.bytesSent += frame.byteLength;
      this.send(frame);
    }
    this.queue = [];
    this.head = 0;
  }

  clear(): void {
    this.queue = [];
    this.head = 0;
    this.unsentBuffers = 0;
  }
}

export class RemoteInputChannel implements InputChannel {
  private readonly received: LocalChannel;
  /** Restored in-flight buffers still queued: they were never sent, so freeing them gives no credit. */
  private restoredBuffers = 0;
  private readonly overtaken = new Map<number, InflightElement[]>();
  /**
   * Buffers freed and not announced yet, fewer than creditBatch. The producer is never starved by
   * them: if this end has nothing left to hand on, every buffer of the window not announced is
   * here, and creditBatch <= capacity, so the announcement is made.
   */
  private unannounced = 0;
  private readonly creditBatch: number;

  constructor(
    readonly id: string,
    capacityBuffers: number,
    /** Announces freed buffers to the producer. */
    private readonly announceCredit: (buffers: number) => void,
  ) {
    assert(capacityBuffers >= 1, `channel ${id}: capacity must be >= 1`);
    this.received = new LocalChannel(id, capacityBuffers);
    this.creditBatch = Math.max(1, capacityBuffers >> 2);
  }

  /** A frame from the producer's end. */
  receive(frame: Uint8Array): void {
    const element = decodeElement(frame, this.id);
    if (element.kind === 'barrier' && element.options.alignment === 'unaligned') {
      this.overtaken.set(element.checkpointId, this.received.overtakeWith(element));
    } else {
      this.received.push(element);
    }
  }

  setConsumer(listener: ChannelListener): void {
    this.received.setConsumer(listener);
  }

  peek(): StreamElement | undefined {
    return this.received.peek();
  }

  poll(): StreamElement | undefined {
    const element = this.received.poll();
    if (element !== undefined && element.kind === 'buffer') {
      if (this.restoredBuffers > 0) this.restoredBuffers--;
      else if (++this.unannounced >= this.creditBatch) {
        this.announceCredit(this.unannounced);
        this.unannounced = 0;
      }
    }
    return element;
  }

  get size(): number {
    return this.received.size;
  }

  /** Data buffers received and not yet processed. */
  get bufferedBuffers(): number {
    return this.received.bufferedBuffers;
  }

  /**
   * As LocalChannel's; a barrier that overtook buffers on arrival (unaligned) had those buffers
   * behind it, ahead of it in the stream: they are returned too, or they would be in no channel state.
   */
  pullForward(checkpointId: number): InflightElement[] | null {
    const ahead = this.received.pullForward(checkpointId);
    if (ahead === null) return null;
    const overtaken = this.takeOvertaken(checkpointId);
    return overtaken === null || overtaken.length === 0 ? ahead : [...ahead, ...overtaken];
  }

  push(element: StreamElement): void {
    if (element.kind === 'buffer') this.restoredBuffers++;
    this.received.push(element);
  }

  takeOvertaken(checkpointId: number): InflightElement[] | null {
    const buffers = this.overtaken.get(checkpointId) ?? null;
    this.overtaken.delete(checkpointId);
    return buffers;
  }

  clear(): void {
    this.received.clear();
    this.overtaken.clear();
    this.restoredBuffers = 0;
    this.unannounced = 0;
  }
}
