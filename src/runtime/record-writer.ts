/**
 * Record writer: batches one subtask's output records into buffers per downstream channel of one
 * edge. A buffer is handed to its channel when full or when the task flushes (end of each step,
 * before a barrier), so records never wait long and never travel one message each.
 */
import { assert } from '../core/assert.ts';
import { assignToKeyGroup, subtaskForKeyGroup } from '../state/key-groups.ts';
import type { Key } from '../state/key-groups.ts';
import type { OutputChannel } from './channel.ts';
import type { StreamElement } from './elements.ts';
import type { PartitionerSpec } from './partitioner.ts';

export class RecordWriter {
  private readonly pending: unknown[][];
  private readonly pendingKeyGroups: number[][] | null;
  private roundRobin: number;
  private readonly keySelector: ((record: any) => Key) | null;
  recordsOut = 0;

  constructor(
    readonly channels: readonly OutputChannel[],
    private readonly partitioner: PartitionerSpec,
    private readonly bufferRecords: number,
    private readonly maxParallelism: number,
    startChannel: number,
  ) {
    assert(channels.length > 0, 'record writer without channels');
    if (partitioner.type === 'forward') assert(channels.length === 1, 'forward edge must have one channel per subtask');
    this.pending = channels.map(() => []);
    this.keySelector = partitioner.type === 'hash' ? partitioner.keySelector : null;
    this.pendingKeyGroups = partitioner.type === 'hash' ? channels.map(() => []) : null;
    this.roundRobin = startChannel % channels.length;
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
        const ch = subtaskForKeyGroup(this.maxParallelism, this.channels.length, kg);
        this.pendingKeyGroups![ch]!.push(kg);
        this.add(ch, record);
        return;
      }
    }
  }

  private add(ch: number, record: unknown): void {
    const buf = this.pending[ch]!;
    buf.push(record);
    if (buf.length >= this.bufferRecords) this.flushChannel(ch);
  }

  private flushChannel(ch: number): void {
    const records = this.pending[ch]!;
    if (records.length === 0) return;
    this.pending[ch] = [];
    let keyGroups: Int32Array | null = null;
    if (this.pendingKeyGroups) {
      keyGroups = Int32Array.from(this.pendingKeyGroups[ch]!);
      this.pendingKeyGroups[ch] = [];
    }
    this.channels[ch]!.push({ kind: 'buffer', records, keyGroups });
  }

  flush(): void {
    for (let ch = 0; ch < this.channels.length; ch++) this.flushChannel(ch);
  }

  /** Flushes, then sends an event on every channel (events follow the records before them). */
  broadcastEvent(event: StreamElement): void {
    this.flush();
    for (const channel of this.channels) channel.push(event);
  }

  hasCredit(): boolean {
    for (const channel of this.channels) if (!channel.hasCredit()) return false;
    return true;
  }
}
