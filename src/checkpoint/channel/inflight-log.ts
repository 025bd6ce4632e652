/**
 * In-flight data of one unaligned checkpoint at one subtask: the output buffers its barrier
 * overtook, and per input channel the buffers (with the watermarks between them) ahead of a pulled-forward barrier or consumed before
 * that channel's barrier arrived. Complete when every input channel delivered the barrier.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { InflightElement } from './buffer.ts';

export class InflightAborted extends Error {
  constructor(checkpointId: number) {
    super(`in-flight data of checkpoint ${checkpointId} was dropped: the checkpoint was aborted`);
  }
}

export class InflightLog {
  readonly input: InflightElement[][];
  readonly output: Array<{ readonly gate: number; readonly channel: number; readonly buffers: InflightElement[] }> = [];
  readonly whenComplete: Promise<void>;
  private settle!: { resolve(): void; reject(e: Error): void };
  private settled = false;

  constructor(
    readonly checkpointId: CheckpointId,
    inputChannels: number,
  ) {
    this.input = Array.from({ length: inputChannels }, () => []);
    this.whenComplete = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    this.whenComplete.catch(() => {}); // an aborted log may have no reader
  }

  complete(): void {
    if (this.settled) return;
    this.settled = true;
    this.settle.resolve();
  }

  abort(): void {
    if (this.settled) return;
    this.settled = true;
    this.settle.reject(new InflightAborted(this.checkpointId));
  }
}
