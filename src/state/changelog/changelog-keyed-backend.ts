/**
 * The changelog keyed backend: wraps a heap or embedded backend, logs every change the wrapped
 * backend reports (its change listener) into a per-subtask buffer uploaded in the background, and
 * checkpoints as "materialization + log range". The sync phase seals the buffer and records the
 * sequence number; the async phase only waits until the log up to it is durable. Materialization
 * (a snapshot of the wrapped backend, written to `shared/`) runs in the background every
 * `materializationIntervalMs`, and a checkpoint after it refers to it and to the log after it only.
 */
import { assert } from '../../core/assert.ts';
import { errorMessage } from '../../core/errors.ts';
import { type CheckpointId, checkpointId as toCheckpointId, type KeyGroup } from '../../core/ids.ts';
import type { Clock, Scheduler } from '../../core/time.ts';
import { streamSize } from '../../storage/handles.ts';
import type { CheckpointStreamFactory, StateScope } from '../../storage/storage.ts';
import type { InputHold, KeyedStateBackend, RestoreOptions, SnapshotOptions, SnapshotRunner, StateChangeListener, StateReader } from '../backend.ts';
import type { StateDescriptor, StateKind } from '../descriptors.ts';
import { changelogHandleKind, type ChangelogStateHandle, type Materialization, materializationBytes } from '../handles/changelog.ts';
import { isKeyedHandleOf, type KeyedStateHandle } from '../handles/registry.ts';
import type { Key, KeyGroupRange } from '../key-groups.ts';
import { ChangelogWriter } from './log-writer.ts';
import type { ChangelogFigures } from './figures.ts';
import type { SharedLogUploader } from './shared-log-uploader.ts';
import { ChangelogUploader, type SegmentWrite } from './uploader.ts';

/** The changelog settings a backend runs with. */
export interface ChangelogSettings {
  /** Pending log bytes that start an upload at once. */
  readonly uploadBytesThreshold: number;
  /** The longest a change waits in the buffer before its batch is uploaded. */
  readonly uploadDelayMs: number;
  readonly uploadAttemptsMax: number;
  readonly uploadTimeoutMs: number;
  /** Bytes in flight beyond which the subtask is held back (`backpressured`). */
  readonly inFlightBytesMax: number;
  readonly materializationIntervalMs: number;
  /**
   * A materialization starts before its interval once the log since the last one passes this share
   * of that one's size (and `MATERIALIZATION_LOG_BYTES_MIN`): the log a checkpoint keeps and a restore
   * replays stays within about that share of the state, whatever the update rate.
   */
  readonly materializationLogShareMax: number;
}

/** Log bytes below which the log's size never starts a materialization (a small state's log outgrows it at once). */
export const MATERIALIZATION_LOG_BYTES_MIN = 1024 * 1024;

/** What the changelog backend needs from its task: storage for segments and materializations, time. */
export interface ChangelogServices {
  /** A stream factory for files that belong to no single checkpoint (written to `shared/`). */
  readonly streams: CheckpointStreamFactory;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /**
   * Unique to the run and attempt (the deployment's run id), put in every segment's name: a segment
   * of a later attempt never takes the name of an earlier one's that was deleted (the job master
   * remembers deleted names, and a file under one would be neither an orphan nor reusable).
   */
  readonly runTag?: string;
  /** The process's shared uploader: batches go into files shared with other subtasks (absent: one file per batch). */
  readonly share?: SharedLogUploader;
}

export type { ChangelogFigures } from './figures.ts';

const NO_MATERIALIZATION: Materialization = { id: 0, seq: 0, handles: [] };

/** A snapshot factory that writes every file of a materialization to `shared/`, under names no checkpoint's cleanup claims. */
function materializationStreams(shared: CheckpointStreamFactory, id: CheckpointId): CheckpointStreamFactory {
  const hint = (nameHint: string): string => `chlog-mat-${id}-${nameHint.replace(/^ckpt-\d+-/, '')}`;
  return {
    checkpointId: id,
    write: (_scope: StateScope, nameHint: string, data: Uint8Array) => shared.write('shared', hint(nameHint), data),
    ...(shared.writeParts === undefined
      ? {}
      : { writeParts: (_scope: StateScope, nameHint: string, parts: readonly Uint8Array[]) => shared.writeParts!('shared', hint(nameHint), parts) }),
  };
}

/** Keyed state in a wrapped backend, with every change logged and uploaded as it happens. */
export class ChangelogKeyedStateBackend implements KeyedStateBackend, StateChangeListener {
  private writer = new ChangelogWriter();
  private uploader: ChangelogUploader;
  private readonly kinds = new Map<string, StateKind>();
  /** State name -> the writer's id for it (reset with the writer). */
  private ids = new Map<string, number>();
  private materialization: Materialization = NO_MATERIALIZATION;
  /** A finished materialization the next checkpoint adopts. */
  private finished: Materialization | null = null;
  private running: Promise<Materialization> | null = null;
  private disposed = false;
  /** Set after a restore that did not continue a log: the next checkpoint waits for a materialization. */
  private materializeNext = false;
  private lastMaterializedAtMs: number;
  /** Log bytes sealed since the newest materialization started (or in the restored log), the writer's pending bytes not included. */
  private logBytes = 0;
  /** Bytes of the newest materialization (finished or restored): what the log's size is weighed against. */
  private materializedSize = 0;
  private knownCompleted: number | null = null;
  /**
   * Checkpoints whose async part has not named its segments yet, by the sequence number their log
   * may start at (the materialization current at their sync part, or a newer one). A newer
   * materialization adopted meanwhile must not truncate segments they still name (seed 73 of
   * file-sink, exactly-once: a handle named changes in no segment).
   */
  private readonly unnamed = new Map<number, number>();
  private readonly savepoints = new Set<number>();
  private delayTimer: { cancel(): void } | null = null;
  private outer: StateChangeListener | null = null;
  private readonly counts = {
    materializations: 0,
    materializationFailures: 0,
    materializedAtMs: null as number | null,
    materializedBytes: 0,
    truncations: 0,
    restoresByReplay: 0,
  };

  constructor(
    private readonly inner: KeyedStateBackend,
    private readonly settings: ChangelogSettings,
    private readonly services: ChangelogServices,
    private readonly who: string,
  ) {
    this.uploader = this.newUploader(0);
    this.lastMaterializedAtMs = services.clock.now();
    inner.setChangeListener(this);
  }

  private newUploader(base: number, restored: ChangelogStateHandle['segments'] = []): ChangelogUploader {
    const share = this.services.share;
    const write: SegmentWrite =
      share === undefined ? (hint, bytes) => this.services.streams.write('shared', hint, bytes) : share.writer(this.settings.uploadBytesThreshold);
    const settings = { attemptsMax: this.settings.uploadAttemptsMax, timeoutMs: this.settings.uploadTimeoutMs };
    const who = (this.services.runTag === undefined ? this.who : `${this.who}-${this.services.runTag}`).replace(/[^A-Za-z0-9_-]/g, '_');
    return new ChangelogUploader(write, this.services.scheduler, settings, who, base, restored, () => this.released());
  }

  get keyGroupRange(): KeyGroupRange {
    return this.inner.keyGroupRange;
  }

  get maxParallelism(): number {
    return this.inner.maxParallelism;
  }

  /** Whether the bytes in flight passed the bound: the task should take no more input until they drop. */
  get backpressured(): boolean {
    return this.uploader.figures.inFlightBytes >= this.settings.inFlightBytesMax;
  }

  private readonly wakers = new Set<() => void>();

  readonly inputHold: InputHold = {
    holding: () => this.backpressured,
    onRelease: (wake) => void this.wakers.add(wake),
  };

  private released(): void {
    if (this.backpressured || this.wakers.size === 0) return;
    const wakers = [...this.wakers];
    this.wakers.clear();
    for (const wake of wakers) wake();
  }

  setCurrentKey(key: Key, keyGroup: KeyGroup): void {
    this.inner.setCurrentKey(key, keyGroup);
  }

  getCurrentKey(): Key {
    return this.inner.getCurrentKey();
  }

  getCurrentKeyGroup(): KeyGroup {
    return this.inner.getCurrentKeyGroup();
  }

  getState<S>(descriptor: StateDescriptor): S {
    const state = this.inner.getState<S>(descriptor);
    this.kinds.set(descriptor.name, descriptor.kind);
    return state;
  }

  /** The record path: encode into the buffer; upload when it is full enough, or arm the delay bound. */
  onChange(stateName: string, keyGroup: KeyGroup, key: Key, op: 'set' | 'clear' | 'append' | 'mapPut' | 'mapRemove', value: unknown, mapKey?: unknown): void {
    let id = this.ids.get(stateName);
    if (id === undefined) {
      const kind = this.kinds.get(stateName);
      assert(kind !== undefined, () => `${this.who}: change of state "${stateName}", which was never requested`);
      id = this.writer.stateId(stateName, kind);
      this.ids.set(stateName, id);
    }
    this.writer.append(op, id, keyGroup, key, value, mapKey);
    if (this.outer !== null) this.outer.onChange(stateName, keyGroup, key, op, value, mapKey);
    if (this.writer.pendingBytes >= this.settings.uploadBytesThreshold) this.flush();
    else if (this.delayTimer === null) this.delayTimer = this.armDelay();
  }

  private readonly flushBound = (): void => this.flush();

  /** The delay bound of the pending changes: this subtask's own timer, or the process's shared one (its batch then shares a file). */
  private armDelay(): { cancel(): void } {
    const share = this.services.share;
    if (share !== undefined) return share.arm(this.settings.uploadDelayMs, this.flushBound);
    return this.services.scheduler.schedule(this.settings.uploadDelayMs, this.flushBound);
  }

  /** Seals what is pending and uploads it. */
  private flush(): void {
    this.delayTimer?.cancel();
    this.delayTimer = null;
    const batch = this.writer.seal();
    if (batch === null) return;
    this.logBytes += batch.bytes.byteLength;
    this.uploader.upload(batch);
  }

  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory, options?: SnapshotOptions): SnapshotRunner<KeyedStateHandle[]> {
    if (options?.kind === 'savepoint') {
      // Savepoints stay canonical: the wrapped backend's own full snapshot, no log inside.
      this.savepoints.add(checkpointId);
      return this.inner.snapshot(checkpointId, streams, options);
    }
    this.flush();
    const toSeq = this.writer.nextSeq;
    if (this.finished !== null) this.adopt(this.finished);
    let materialization: Promise<Materialization> | Materialization = this.materialization;
    const due = this.services.clock.now() - this.lastMaterializedAtMs >= this.settings.materializationIntervalMs || this.logOutgrew();
    if (this.running === null && (this.materializeNext || due)) {
      const started = this.materialize(checkpointId, toSeq);
      if (this.materializeNext) materialization = started;
    } else if (this.materializeNext && this.running !== null) {
      materialization = this.running;
    }
    const known = this.knownCompleted;
    this.unnamed.set(checkpointId, this.materialization.seq);
    const keyCounts = this.inner.keyCounts();
    const range = this.inner.keyGroupRange;
    return {
      syncInfo: { stateBytesEstimate: this.uploader.figures.inFlightBytes },
      run: async () => {
        try {
          const m = await materialization;
          await this.uploader.durable(toSeq);
          const handle: ChangelogStateHandle = {
            type: 'changelog',
            range,
            checkpointId,
            knownCompletedCheckpointId: known,
            materialization: m,
            segments: this.uploader.covering(m.seq, toSeq),
            toSeq,
            keyCounts,
          };
          return [handle];
        } finally {
          this.unnamed.delete(checkpointId);
        }
      },
    };
  }

  /** Whether the log since the newest materialization passed its share of that one's size. */
  private logOutgrew(): boolean {
    return this.logBytes >= MATERIALIZATION_LOG_BYTES_MIN && this.logBytes >= this.settings.materializationLogShareMax * this.materializedSize;
  }

  /** Starts a materialization of everything before `seq` (the sync part now, the upload in the background). */
  private materialize(id: CheckpointId, seq: number): Promise<Materialization> {
    const runner = this.inner.snapshot(id, materializationStreams(this.services.streams, id));
    this.lastMaterializedAtMs = this.services.clock.now();
    this.logBytes = 0;
    // In bounded steps with the task's turns between them: a materialization of a large state would
    // otherwise hold the subtask's thread for its whole encoding (measured: 5.4 s at 1 M keys).
    const running = runner.run(this.yieldTurn).then(
      (handles) => {
        this.inner.notifyCheckpointComplete(id);
        const m: Materialization = { id, seq, handles };
        this.counts.materializations++;
        this.counts.materializedAtMs = this.services.clock.now();
        this.counts.materializedBytes = materializationBytes(m);
        this.materializedSize = this.counts.materializedBytes;
        if (this.running === running) this.running = null;
        this.finished = m;
        this.materializeNext = false;
        return m;
      },
      (err: unknown) => {
        this.inner.notifyCheckpointAborted(id);
        this.counts.materializationFailures++;
        if (this.running === running) this.running = null;
        throw new Error(`${this.who}: materialization ${id} failed: ${errorMessage(err)}`, { cause: err });
      },
    );
    running.catch(() => undefined);
    this.running = running;
    this.onMaterializationStart?.();
    return running;
  }

  /** Lets the task's other work (records, timers) run between the steps of a materialization. */
  private readonly yieldTurn = (): Promise<void> => new Promise<void>((resolve) => this.services.scheduler.execute(resolve));

  /** Told each time a materialization starts (its sync part done, its files being written): the simulator's kill point. */
  onMaterializationStart: (() => void) | null = null;

  /** Later checkpoints refer to `m` and the log after it; older segments are left to the checkpoints that hold them. */
  private adopt(m: Materialization): void {
    this.finished = null;
    if (m.seq < this.materialization.seq) return;
    this.materialization = m;
    let keep = m.seq;
    for (const from of this.unnamed.values()) keep = Math.min(keep, from);
    this.uploader.truncate(keep);
    this.counts.truncations++;
  }

  async restore(handles: readonly KeyedStateHandle[], read: StateReader, options?: RestoreOptions): Promise<void> {
    await this.inner.restore(handles, read, options);
    const only = handles.length === 1 ? handles[0]! : null;
    const range = this.inner.keyGroupRange;
    if (
      only !== null &&
      isKeyedHandleOf(only, changelogHandleKind) &&
      options?.firstCheckpointFull !== true &&
      only.range.start === range.start &&
      only.range.end === range.end
    ) {
      // Same range, own files: continue the restored log, so the next checkpoint needs no materialization.
      this.materialization = only.materialization;
      const log = only.segments.filter((s) => s.toSeq > only.materialization.seq);
      this.materializedSize = materializationBytes(only.materialization);
      // The restored log counts against it: its segments are kept and replayed as the new log's are.
      this.logBytes = log.reduce((n, s) => n + streamSize(s.stream), 0);
      this.writer = new ChangelogWriter(only.toSeq);
      this.ids = new Map();
      this.uploader = this.newUploader(only.toSeq, log);
      this.knownCompleted = only.checkpointId;
    } else if (handles.length > 0) {
      this.materializeNext = true;
    }
    if (handles.some((h) => isKeyedHandleOf(h, changelogHandleKind))) this.counts.restoresByReplay++;
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    if (this.savepoints.delete(checkpointId)) {
      this.inner.notifyCheckpointComplete(checkpointId);
      return;
    }
    if (this.knownCompleted === null || checkpointId > this.knownCompleted) this.knownCompleted = checkpointId;
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.unnamed.delete(checkpointId);
    // A materialization started under this id runs on: its files belong to no checkpoint.
    if (this.savepoints.delete(checkpointId)) this.inner.notifyCheckpointAborted(checkpointId);
  }

  keyCounts(): Record<string, number> {
    return this.inner.keyCounts();
  }

  entries(stateName: string): Array<[Key, unknown]> {
    return this.inner.entries(stateName);
  }

  /** Another observer of changes (a test or simulator wrapper); the log keeps listening either way. */
  setChangeListener(listener: StateChangeListener | null): void {
    this.outer = listener;
  }

  /** Figures with the buffer's pending bytes filled in. */
  changelogFigures(): ChangelogFigures {
    return { ...this.uploader.figures, ...this.counts, pendingBytes: this.writer.pendingBytes };
  }

  /** Whether a materialization is under way (started, not finished or failed) in a backend not disposed. */
  get materializing(): boolean {
    return this.running !== null && !this.disposed;
  }

  dispose(): void {
    this.disposed = true;
    this.delayTimer?.cancel();
    this.delayTimer = null;
    this.inner.setChangeListener(null);
    this.inner.dispose();
  }
}

/** The id under which segment uploads write: they belong to no single checkpoint. */
export const CHANGELOG_STREAMS_ID = toCheckpointId(0);
