/**
 * Record writer: batches one subtask's output records into buffers per downstream channel of one
 * edge. A buffer is handed to its channel when full or when the task flushes (end of each step,
 * before a barrier), so records never wait long and never travel one message each.
 */
import { assert } from '../core/assert.ts';
import { assignToKeyGroup, subtaskForKeyGroup } from '../state/key-groups.ts';
import type { Key } from '../state/key-groups.ts';
import type { OutputChannel } from './network/channel.ts';
import type { StreamElement } from './elements.ts';
import type { PartitionerSpec } from './partitioner.ts';
import { NO_TIMESTAMP } from '../core/watermark.ts';
import { newElementTimestamp, type ElementTimestamp } from './time/element-timestamp.ts';

/**
 * An empty records array whose elements kind is already the generic one. An empty `[]` starts as
 * small integers and its first push of an object or string changes its kind; a push site that
 * sees both kinds stops being inlined, and every record's push went through V8's builtin
 * (BENCHMARKS.md, "weir_vs_loop after the per-record fixes"). Starting generic keeps one kind.
 */
function newRecordBuffer(): unknown[] {
  const records: unknown[] = [undefined];
  records.length = 0;
  return records;
}

export class RecordWriter {
  private readonly pending: unknown[][];
  /** Hash edges: per channel, the key group of each pending record (written in place, sliced at flush). */
  private readonly pendingKeyGroups: Int32Array[] | null;
  private roundRobin: number;
  private readonly keySelector: ((record: any) => Key) | null;
  /**
   * Per channel, the timestamps of the pending records once one of them has a timestamp (null
   * until then: records without event time cost one comparison).
   */
  private readonly pendingTimestamps: Array<Float64Array | null>;
  private readonly timed: boolean[];
  /** Whether the register may hold event time: until then records skip it (element-timestamp.ts). */
  private registerTimed = false;
  recordsOut = 0;

  constructor(
    readonly channels: readonly OutputChannel[],
    private readonly partitioner: PartitionerSpec,
    private readonly bufferRecords: number,
    private readonly maxParallelism: number,
    startChannel: number,
    /** The subtask's event-time register: each record goes out with its current value. */
    private readonly timestamp: ElementTimestamp = newElementTimestamp(),
  ) {
    assert(channels.length > 0, 'record writer without channels');
    if (partitioner.type === 'forward') assert(channels.length === 1, 'forward edge must have one channel per subtask');
    this.pending = channels.map(() => newRecordBuffer());
    this.keySelector = partitioner.type === 'hash' ? partitioner.keySelector : null;
    this.pendingKeyGroups = partitioner.type === 'hash' ? channels.map(() => new Int32Array(bufferRecords)) : null;
    this.roundRobin = startChannel % channels.length;
    this.pendingTimestamps = channels.map(() => null);
    this.timed = channels.map(() => false);
    timestamp.onTimed(() => {
      this.registerTimed = true;
    });
  }

  emit(record: unknown): void {
    this.recordsOut++;
    switch (this.partitioner.type) {
      case 'forward':
        this.add(0, record);
        return;
      case 'rebalance': {
        const ch = this.roundRobin;
        this.roundRobin = ch + 1 === this.channels.length ? 0 : ch + 1;
        this.add(ch, record);
        return;
      }
      case 'broadcast':
        for (let ch = 0; ch < this.channels.length; ch++) this.add(ch, record);
        return;
      case 'hash': {
        const kg = assignToKeyGroup(this.keySelector!(record), this.maxParallelism);
        const ch = this.channels.length === 1 ? 0 : subtaskForKeyGroup(this.maxParallelism, this.channels.length, kg);
        this.pendingKeyGroups![ch]![this.pending[ch]!.length] = kg;
        this.add(ch, record);
        return;
      }
    }
  }

  private add(ch: number, record: unknown): void {
    const buf = this.pending[ch]!;
    if (this.registerTimed) this.addTimestamp(ch, buf.length);
    buf.push(record);
    if (buf.length >= this.bufferRecords) this.flushChannel(ch);
  }

  /** The current record's event time, at index `at` of channel `ch`'s pending buffer. */
  private addTimestamp(ch: number, at: number): void {
    const ts = this.timestamp.current;
    if (this.timed[ch]) this.pendingTimestamps[ch]![at] = ts;
    else if (ts !== NO_TIMESTAMP) this.startTimestamps(ch, at, ts);
  }

  /** The first timestamped record of a pending buffer: earlier ones get NO_TIMESTAMP. */
  private startTimestamps(ch: number, at: number, ts: number): void {
    let column = this.pendingTimestamps[ch];
    if (!column || column.length < this.bufferRecords) column = this.pendingTimestamps[ch] = new Float64Array(this.bufferRecords);
    column.fill(NO_TIMESTAMP, 0, at);
    column[at] = ts;
    this.timed[ch] = true;
  }

  private flushChannel(ch: number): void {
    const records = this.pending[ch]!;
    if (records.length === 0) return;
    this.pending[ch] = newRecordBuffer();
    let timestamps: Float64Array | null = null;
    if (this.timed[ch]) {
      timestamps = this.pendingTimestamps[ch]!.slice(0, records.length);
      this.timed[ch] = false;
    }
    let keyGroups: Int32Array | null = null;
    if (this.pendingKeyGroups) keyGroups = this.pendingKeyGroups[ch]!.slice(0, records.length);
    this.channels[ch]!.push({ kind: 'buffer', records, keyGroups, timestamps });
  }

  flush(): void {
    for (let ch = 0; ch < this.channels.length; ch++) this.flushChannel(ch);
  }

  /** Flushes, then sends an event on every channel (events follow the records before them). */
  broadcastEvent(event: StreamElement): void {
    this.flush();
    for (const channel of this.channels) channel.push(event);
  }

  /** Flushes, then sends the watermark on every channel (after the records before it). */
  emitWatermark(watermarkMs: number): void {
    this.broadcastEvent({ kind: 'watermark', timestampMs: watermarkMs });
  }

  hasCredit(): boolean {
    for (const channel of this.channels) if (!channel.hasCredit()) return false;
    return true;
  }
}
