/**
 * Uploads sealed log batches of one subtask to checkpoint storage, in the background: a bounded
 * number of attempts each bounded by a timeout, the bytes in flight counted so the record path can
 * be held back, and the uploaded segments kept in sequence order for the checkpoints that need them.
 */
import { errorMessage, StorageError } from '../../core/errors.ts';
import type { Scheduler } from '../../core/time.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import type { ChangelogSegment } from '../handles/changelog.ts';
import type { SealedBatch } from './log-writer.ts';

/** Writes one segment to storage (shared scope); `hint` names it. */
export type SegmentWrite = (hint: string, bytes: Uint8Array) => Promise<StreamStateHandle>;

export interface UploaderSettings {
  readonly attemptsMax: number;
  readonly timeoutMs: number;
}

/** What the uploader has done, for metrics. */
export interface UploadFigures {
  inFlightBytes: number;
  uploadedBytes: number;
  uploads: number;
  retries: number;
  failures: number;
}

interface Waiter {
  readonly seq: number;
  resolve(): void;
  reject(err: Error): void;
}

/** Background uploads of one subtask's log. */
export class ChangelogUploader {
  /** Uploaded segments, ascending by fromSeq. */
  private segments: ChangelogSegment[] = [];
  /** Every change before it is uploaded (contiguously from `base`). */
  private durableTo: number;
  /** Batches whose upload gave up: the log has a gap there until a materialization passes it. */
  private failed: Array<{ readonly fromSeq: number; readonly error: Error }> = [];
  private waiters: Waiter[] = [];
  private uploadsStarted = 0;
  readonly figures: UploadFigures = { inFlightBytes: 0, uploadedBytes: 0, uploads: 0, retries: 0, failures: 0 };

  constructor(
    private readonly write: SegmentWrite,
    private readonly scheduler: Scheduler,
    private readonly settings: UploaderSettings,
    private readonly who: string,
    base: number,
    restored: readonly ChangelogSegment[] = [],
    /** Called whenever bytes in flight went down. */
    private readonly onLanded: () => void = () => undefined,
  ) {
    this.segments = [...restored];
    this.durableTo = Math.max(base, ...restored.map((s) => s.toSeq));
  }

  /** Starts uploading `batch` (the next batch in sequence) in the background. */
  upload(batch: SealedBatch): void {
    this.figures.inFlightBytes += batch.bytes.byteLength;
    const hint = `changelog-${this.who}-${this.uploadsStarted++}`;
    void this.attempt(batch, hint, 1);
  }

  private async attempt(batch: SealedBatch, hint: string, attempt: number): Promise<void> {
    try {
      const stream = await this.withTimeout(this.write(hint, batch.bytes), hint);
      this.figures.inFlightBytes -= batch.bytes.byteLength;
      this.figures.uploadedBytes += batch.bytes.byteLength;
      this.figures.uploads++;
      this.insert({ fromSeq: batch.fromSeq, toSeq: batch.toSeq, stream });
      this.onLanded();
    } catch (err) {
      if (attempt < this.settings.attemptsMax) {
        this.figures.retries++;
        return this.attempt(batch, hint, attempt + 1);
      }
      this.figures.inFlightBytes -= batch.bytes.byteLength;
      this.figures.failures++;
      const error = new StorageError(
        'STORAGE_IO',
        hint,
        `changelog upload of changes ${batch.fromSeq} to ${batch.toSeq} failed after ${attempt} attempts: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
      this.failed.push({ fromSeq: batch.fromSeq, error });
      this.settle();
      this.onLanded();
    }
  }

  private withTimeout<T>(work: Promise<T>, hint: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.scheduler.schedule(this.settings.timeoutMs, () =>
        reject(new StorageError('STORAGE_IO', hint, `changelog upload did not finish within ${this.settings.timeoutMs} ms`)),
      );
      work.then(
        (v) => {
          timer.cancel();
          resolve(v);
        },
        (e: unknown) => {
          timer.cancel();
          reject(e);
        },
      );
    });
  }

  private insert(segment: ChangelogSegment): void {
    let i = this.segments.length;
    while (i > 0 && this.segments[i - 1]!.fromSeq > segment.fromSeq) i--;
    this.segments.splice(i, 0, segment);
    for (const s of this.segments) if (s.fromSeq <= this.durableTo && s.toSeq > this.durableTo) this.durableTo = s.toSeq;
    this.settle();
  }

  private settle(): void {
    const waiting: Waiter[] = [];
    for (const w of this.waiters) {
      if (this.durableTo >= w.seq) w.resolve();
      else if (this.failed.some((f) => f.fromSeq < w.seq)) w.reject(this.failed.find((f) => f.fromSeq < w.seq)!.error);
      else waiting.push(w);
    }
    this.waiters = waiting;
  }

  /** Resolves once every change before `seq` is uploaded; rejects if an upload of one of them gave up. */
  durable(seq: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, resolve, reject });
      this.settle();
    });
  }

  /** The segments holding changes [fromSeq, toSeq). */
  covering(fromSeq: number, toSeq: number): ChangelogSegment[] {
    return this.segments.filter((s) => s.toSeq > fromSeq && s.fromSeq < toSeq);
  }

  /** A materialization holds every change before `seq`: older segments (and an upload failure among them) are no longer needed. */
  truncate(seq: number): void {
    this.segments = this.segments.filter((s) => s.toSeq > seq);
    this.failed = this.failed.filter((f) => f.fromSeq >= seq);
    if (this.durableTo < seq) this.durableTo = seq;
    this.settle();
  }
}
