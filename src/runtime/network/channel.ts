/**
 * A channel: the FIFO connection from one upstream subtask to one downstream subtask, in one
 * process. It holds at most `capacityBuffers` data buffers (credit); events take no credit. A full
 * channel stops its producer until the consumer takes a buffer (backpressure).
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointBarrier } from '../../checkpoint/barrier/barrier.ts';
import type { InflightElement } from '../../checkpoint/channel/buffer.ts';
import type { StreamElement } from '../elements.ts';

export interface ChannelListener {
  /** Data or an event became available. */
  onAvailable(): void;
  /**
   * A barrier was enqueued (an announcement: the consumer learns of it before reaching it, so an
   * alignment timeout can start, and a barrier stuck in the queue can be pulled forward).
   */
  onBarrierQueued?(barrier: CheckpointBarrier): void;
}

/** The producer's end of a channel, as a record writer and the checkpoint's barrier emission see it. */
export interface OutputChannel {
  readonly id: string;
  push(element: StreamElement): void;
  /** Whether one more data buffer fits (the producer stops while any of its channels has none). */
  hasCredit(): boolean;
  setProducer(listener: ChannelListener): void;
  /** An unaligned barrier goes ahead of what is queued on the producer's side; returns the buffers and watermarks it overtook. */
  overtakeWith(barrier: CheckpointBarrier): InflightElement[];
  clear(): void;
}

/** The consumer's end of a channel, as an input gate and the barrier handler see it. */
export interface InputChannel {
  readonly id: string;
  setConsumer(listener: ChannelListener): void;
  peek(): StreamElement | undefined;
  poll(): StreamElement | undefined;
  readonly size: number;
  pullForward(checkpointId: number): InflightElement[] | null;
  /** Restored in-flight data, put back before anything new arrives. */
  push(element: StreamElement): void;
  /**
   * Data buffers an unaligned barrier overtook on the consumer's side (it arrived behind them over
   * a remote channel), taken once: in-flight data of that checkpoint on this channel. A local
   * channel has none (its producer's end did the overtaking).
   */
  takeOvertaken?(checkpointId: number): InflightElement[] | null;
  clear(): void;
}

/** Both ends in one: the channel between two subtasks of the same task manager. */
export class LocalChannel implements OutputChannel, InputChannel {
  private readonly queue: StreamElement[] = [];
  private head = 0;
  private buffered = 0;
  private consumer: ChannelListener | null = null;
  private producer: ChannelListener | null = null;
  /** Bytes are not known in-process; records stand in for "bytes processed" figures. */
  queuedRecords = 0;

  constructor(
    readonly id: string,
    readonly capacityBuffers: number,
  ) {
    assert(capacityBuffers >= 1, `channel ${id}: capacity must be >= 1`);
  }

  setConsumer(listener: ChannelListener): void {
    this.consumer = listener;
  }

  setProducer(listener: ChannelListener): void {
    this.producer = listener;
  }

  hasCredit(): boolean {
    return this.buffered < this.capacityBuffers;
  }

  get bufferedBuffers(): number {
    return this.buffered;
  }

  get size(): number {
    return this.queue.length - this.head;
  }

  push(element: StreamElement): void {
    if (element.kind === 'buffer') {
      this.buffered++;
      this.queuedRecords += element.records.length;
    }
    this.queue.push(element);
    if (element.kind === 'barrier') this.consumer?.onBarrierQueued?.(element);
    this.consumer?.onAvailable();
  }

  /**
   * An unaligned barrier overtakes everything queued: it goes to the front, and the data buffers
   * (and watermarks) it overtook are returned (they are in-flight data of the checkpoint; they stay queued and are
   * processed as usual).
   */
  overtakeWith(barrier: CheckpointBarrier): InflightElement[] {
    const overtaken = this.inflightElements(this.head, this.queue.length);
    if (this.head > 0) {
      this.queue[--this.head] = barrier;
    } else {
      this.queue.unshift(barrier);
    }
    this.consumer?.onBarrierQueued?.(barrier);
    this.consumer?.onAvailable();
    return overtaken;
  }

  /**
   * Takes barrier n out of the queue if it is there, as if it had been received; returns the data
   * buffers and watermarks queued ahead of it (in-flight data for the switch to unaligned), or null if absent.
   */
  pullForward(checkpointId: number): InflightElement[] | null {
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (e.kind === 'barrier' && e.checkpointId === checkpointId) {
        const ahead = this.inflightElements(this.head, i);
        this.queue.splice(i, 1);
        return ahead;
      }
    }
    return null;
  }

  /** Data buffers and watermark elements in [from, to): what a checkpoint persists of the queue. */
  private inflightElements(from: number, to: number): InflightElement[] {
    const out: InflightElement[] = [];
    for (let i = from; i < to; i++) {
      const e = this.queue[i]!;
      if (isInflightElement(e)) out.push(e);
    }
    return out;
  }

  peek(): StreamElement | undefined {
    return this.head < this.queue.length ? this.queue[this.head] : undefined;
  }

  poll(): StreamElement | undefined {
    if (this.head >= this.queue.length) return undefined;
    const element = this.queue[this.head]!;
    this.queue[this.head] = undefined as unknown as StreamElement;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (element.kind === 'buffer') {
      this.buffered--;
      this.queuedRecords -= element.records.length;
      if (this.buffered === this.capacityBuffers - 1) this.producer?.onAvailable();
    }
    return element;
  }

  /** The queued elements in order, without removing them (for unaligned snapshots and tests). */
  snapshotQueue(): StreamElement[] {
    return this.queue.slice(this.head);
  }

  /** Drops everything (the job is being torn down). */
  clear(): void {
    this.queue.length = 0;
    this.head = 0;
    this.buffered = 0;
    this.queuedRecords = 0;
  }
}

/** Whether an element is part of a channel's persisted in-flight data (buffers, watermarks, statuses). */
export function isInflightElement(e: StreamElement): e is InflightElement {
  return e.kind === 'buffer' || e.kind === 'watermark' || e.kind === 'watermark-status';
}
