/** Set-up for changelog backend tests: virtual time, a storage double, a backend over heap or embedded. */
import type { Cancellable, Clock, Scheduler } from '../../../src/core/time.ts';
import type { KeyedStateBackend } from '../../../src/state/backend.ts';
import { ChangelogKeyedStateBackend, type ChangelogSettings } from '../../../src/state/changelog/changelog-keyed-backend.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import type { CheckpointStreamFactory, StateScope } from '../../../src/storage/storage.ts';
import { checkpointId } from '../../../src/core/ids.ts';

/** A clock and scheduler that move only when told. */
export class ManualTime implements Clock, Scheduler {
  private nowMs = 0;
  private timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  now(): number {
    return this.nowMs;
  }
  wallNow(): number {
    return this.nowMs;
  }
  execute(fn: () => void): void {
    this.schedule(0, fn);
  }
  schedule(delayMs: number, fn: () => void): Cancellable {
    const timer = { at: this.nowMs + delayMs, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }
  /** Moves time on by `ms`, running the timers due (and the promise jobs they start) in order. */
  async advance(ms: number): Promise<void> {
    const until = this.nowMs + ms;
    for (;;) {
      await settle();
      const due = this.timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.at);
      due.fn();
    }
    this.nowMs = until;
    await settle();
  }
}

/** Lets pending promise jobs and I/O callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Shared-scope streams kept inline, with a switch to make writes fail or hang. */
export class SegmentStreams implements CheckpointStreamFactory {
  readonly checkpointId = checkpointId(0);
  readonly writes: Array<{ scope: StateScope; nameHint: string; bytes: number }> = [];
  mode: 'ok' | 'fail' | 'hang' | 'held' = 'ok';
  failures = 0;
  /** Writes made in mode 'held', finished by `release`. */
  private held: Array<() => void> = [];
  release(): void {
    for (const finish of this.held.splice(0)) finish();
  }
  async write(scope: StateScope, nameHint: string, data: Uint8Array): Promise<StreamStateHandle> {
    if (this.mode === 'held') await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.mode === 'fail') {
      this.failures++;
      throw new Error('injected upload failure');
    }
    if (this.mode === 'hang') return new Promise(() => undefined);
    this.writes.push({ scope, nameHint, bytes: data.byteLength });
    return { type: 'inline', data: data.slice(), checksum: 0 };
  }
}

export const SETTINGS: ChangelogSettings = {
  uploadBytesThreshold: 1024,
  uploadDelayMs: 10,
  uploadAttemptsMax: 3,
  uploadTimeoutMs: 1000,
  inFlightBytesMax: 1 << 20,
  materializationIntervalMs: 60_000,
  materializationLogShareMax: 1,
};

export function changelogOver(
  inner: KeyedStateBackend,
  time: ManualTime,
  streams: SegmentStreams,
  settings: Partial<ChangelogSettings> = {},
): ChangelogKeyedStateBackend {
  return new ChangelogKeyedStateBackend(inner, { ...SETTINGS, ...settings }, { streams, clock: time, scheduler: time }, 'op-0');
}
