/**
 * The input side of a subtask: every channel from every upstream subtask, numbered across logical
 * inputs. It hands out the next element from a channel that is neither held back (alignment) nor
 * closed, taking channels in turn so that no input starves.
 */
import { assert } from '../core/assert.ts';
import type { InputChannel } from './network/channel.ts';
import type { StreamElement } from './elements.ts';

export interface InputChannelSpec {
  readonly channel: InputChannel;
  /** Logical input of the head operator: 0, or 1 on two-input operators. */
  readonly input: number;
}

export class InputGate {
  readonly channels: readonly InputChannelSpec[];
  private readonly blocked: boolean[];
  private readonly closed: boolean[];
  private readonly endedData: boolean[];
  private openCount: number;
  private next = 0;
  readonly numInputs: number;
  /** Unaligned barriers queued at the front of some channel: taken before anything else. */
  priorityPending = 0;

  constructor(channels: readonly InputChannelSpec[]) {
    assert(channels.length > 0, 'input gate without channels');
    this.channels = channels;
    this.blocked = channels.map(() => false);
    this.closed = channels.map(() => false);
    this.endedData = channels.map(() => false);
    this.openCount = channels.length;
    this.numInputs = Math.max(...channels.map((c) => c.input)) + 1;
  }

  get openChannels(): number {
    return this.openCount;
  }

  /** The next element and its channel, or null when no unblocked channel has one. */
  poll(): { element: StreamElement; channel: number } | null {
    if (this.priorityPending > 0) {
      const urgent = this.pollPriority();
      if (urgent) return urgent;
    }
    const n = this.channels.length;
    for (let i = 0; i < n; i++) {
      const ch = (this.next + i) % n;
      if (this.blocked[ch] || this.closed[ch]) continue;
      const element = this.channels[ch]!.channel.poll();
      if (element !== undefined) {
        this.next = (ch + 1) % n;
        return { element, channel: ch };
      }
    }
    return null;
  }

  private pollPriority(): { element: StreamElement; channel: number } | null {
    for (let ch = 0; ch < this.channels.length; ch++) {
      if (this.closed[ch]) continue;
      const head = this.channels[ch]!.channel.peek();
      if (head?.kind === 'barrier' && head.options.alignment === 'unaligned') {
        this.priorityPending--;
        return { element: this.channels[ch]!.channel.poll()!, channel: ch };
      }
    }
    this.priorityPending = 0;
    return null;
  }

  openChannelIndexes(): number[] {
    const out: number[] = [];
    for (let ch = 0; ch < this.channels.length; ch++) if (!this.closed[ch]) out.push(ch);
    return out;
  }

  hasAvailable(): boolean {
    if (this.priorityPending > 0) return true;
    for (let ch = 0; ch < this.channels.length; ch++) {
      if (!this.blocked[ch] && !this.closed[ch] && this.channels[ch]!.channel.size > 0) return true;
    }
    return false;
  }

  block(ch: number): void {
    this.blocked[ch] = true;
  }

  unblockAll(): void {
    this.blocked.fill(false);
  }

  isBlocked(ch: number): boolean {
    return this.blocked[ch]!;
  }

  /** Marks end of data on a channel; returns whether its logical input has now ended entirely. */
  markEndOfData(ch: number): boolean {
    this.endedData[ch] = true;
    const input = this.channels[ch]!.input;
    return this.channels.every((c, i) => c.input !== input || this.endedData[i]);
  }

  allEndedData(): boolean {
    return this.endedData.every(Boolean);
  }

  markClosed(ch: number): void {
    assert(!this.closed[ch], `channel ${ch} closed twice`);
    this.closed[ch] = true;
    this.openCount--;
  }

  allClosed(): boolean {
    return this.openCount === 0;
  }

  inputOf(ch: number): number {
    return this.channels[ch]!.input;
  }
}
