/**
 * The changelog uploads of one process (a task manager's deployment, or the whole job in this
 * thread): the sealed batches of several subtasks that are ready at about the same time go into one
 * shared file in `shared/`, and each subtask's segment names its byte range of it (offset, length,
 * checksum of the range), as Flink's changelog storage shares files to keep object counts down.
 *
 * Timing: a subtask with changes waiting arms the shared delay. The group closes when the delay
 * runs out, or on the next turn after a batch sealed outside it (a checkpoint's sync phase, a full
 * buffer) filled it past `bytesMax` or arrived while no delay ran; as it closes, every armed
 * subtask seals its buffer into it, and the group is written as one file. Retries, timeouts and
 * the bytes in flight stay each subtask's own (`ChangelogUploader`): a failed group fails each of
 * its batches, and each subtask tries again into a later group.
 */
import type { Cancellable, Scheduler } from '../../core/time.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { inlineHandleFor, rangeHandleFor } from '../../storage/state-file.ts';
import { type CheckpointStreamFactory, writeStreamParts } from '../../storage/storage.ts';
import type { SegmentWrite } from './uploader.ts';

interface Member {
  readonly bytes: Uint8Array;
  resolve(handle: StreamStateHandle): void;
  reject(err: unknown): void;
}

interface Armed extends Cancellable {
  readonly flush: () => void;
}

/** What the shared uploader did, for tests and metrics. */
export interface SharedLogFigures {
  /** Files written (or being written). */
  files: number;
  /** Batches written into them. */
  batches: number;
}

/** Uploads the changelog batches of a process's subtasks together, one file a group. */
export class SharedLogUploader {
  private armed: Armed[] = [];
  private delay: Cancellable | null = null;
  private closeQueued = false;
  /** Set while `close` seals the armed subtasks' buffers: their batches join the closing group. */
  private closing = false;
  private group: Member[] = [];
  private groupBytes = 0;
  private groupBytesMax = Infinity;
  readonly figures: SharedLogFigures = { files: 0, batches: 0 };

  constructor(
    private readonly streams: CheckpointStreamFactory,
    private readonly scheduler: Scheduler,
    /** Unique to the run and attempt, put in every file's name (see `ChangelogServices.runTag`). */
    tag: string,
  ) {
    this.tag = tag.replace(/[^A-Za-z0-9_-]/g, '_');
  }

  private readonly tag: string;

  /**
   * Calls `flush` (which seals a subtask's buffer and hands the batch to `writer`) when the group
   * closes; starts the delay (`delayMs`) when none runs. The record path calls it once a batch.
   */
  arm(delayMs: number, flush: () => void): Cancellable {
    const armed: Armed = {
      flush,
      cancel: () => {
        const i = this.armed.indexOf(armed);
        if (i < 0) return;
        this.armed.splice(i, 1);
        // Nobody else has changes waiting: the delay would gather nothing more.
        if (this.armed.length === 0 && this.delay !== null) {
          this.delay.cancel();
          this.delay = null;
          if (this.group.length > 0) this.closeSoon();
        }
      },
    };
    this.armed.push(armed);
    if (this.delay === null) this.delay = this.scheduler.schedule(delayMs, () => this.close());
    return armed;
  }

  /** The write one subtask's uploader uses: its batches join the current group; `bytesMax` bytes in a group close it. */
  writer(bytesMax: number): SegmentWrite {
    return (_hint, bytes) => this.submit(bytes, bytesMax);
  }

  private submit(bytes: Uint8Array, bytesMax: number): Promise<StreamStateHandle> {
    return new Promise((resolve, reject) => {
      this.group.push({ bytes, resolve, reject });
      this.groupBytes += bytes.byteLength;
      this.groupBytesMax = Math.min(this.groupBytesMax, bytesMax);
      if (this.closing) return;
      if (this.groupBytes >= this.groupBytesMax || this.delay === null) this.closeSoon();
    });
  }

  /** Closes the group on the next turn (off the record path that filled it). */
  private closeSoon(): void {
    if (this.closeQueued) return;
    this.closeQueued = true;
    this.scheduler.execute(() => this.close());
  }

  /** The delay ran out, or the group is full: every subtask with changes waiting seals them into it, and it is written. */
  private close(): void {
    this.closeQueued = false;
    this.delay?.cancel();
    this.delay = null;
    const armed = this.armed;
    this.armed = [];
    this.closing = true;
    try {
      for (const a of armed) a.flush();
    } finally {
      this.closing = false;
    }
    this.writeGroup();
  }

  /** Writes the batches gathered so far as one file and hands each its part of it. */
  private writeGroup(): void {
    const members = this.group;
    if (members.length === 0) return;
    this.group = [];
    this.groupBytes = 0;
    this.groupBytesMax = Infinity;
    const hint = `changelog-shared-${this.tag}-${this.figures.files++}`;
    this.figures.batches += members.length;
    // Started from a promise job, so a storage that throws at once fails the batches, not the turn.
    Promise.resolve()
      .then(() =>
        writeStreamParts(
          this.streams,
          'shared',
          hint,
          members.map((m) => m.bytes),
        ),
      )
      .then(
        (file) => handOut(file, members),
        (err: unknown) => {
          for (const m of members) m.reject(err);
        },
      );
  }
}

/** Each member's handle of the written `file`: the file itself when it holds one batch, else the member's range (or inline slice). */
function handOut(file: StreamStateHandle, members: readonly Member[]): void {
  if (members.length === 1) {
    members[0]!.resolve(file);
    return;
  }
  let offset = 0;
  for (const m of members) {
    const length = m.bytes.byteLength;
    // A storage that keeps small (or all) state inline gives inline bytes: each member keeps its own.
    if (file.type === 'file') m.resolve(rangeHandleFor(file.path, offset, m.bytes));
    else m.resolve(inlineHandleFor(m.bytes));
    offset += length;
  }
}
