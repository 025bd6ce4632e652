/**
 * The shared changelog uploader: the batches of several subtasks of one process go into one file
 * in `shared/`, each subtask's segments name their byte range of it, and each restores exactly its
 * own changes; a corrupt or torn range is an error naming the file and the range.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import type { KeyedStateBackend } from '../../../src/state/backend.ts';
import { CHANGELOG_STREAMS_ID, ChangelogKeyedStateBackend } from '../../../src/state/changelog/changelog-keyed-backend.ts';
import { SharedLogUploader } from '../../../src/state/changelog/shared-log-uploader.ts';
import type { ChangelogStateHandle } from '../../../src/state/handles/changelog.ts';
import type { ValueState } from '../../../src/state/state.ts';
import { ENVELOPE_HEADER_BYTES } from '../../../src/storage/file-format.ts';
import { FsCheckpointStorage } from '../../../src/storage/fs-storage.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';
import type { CheckpointStorage } from '../../../src/storage/storage.ts';
import { InlineStreams } from '../helpers.ts';
import { descriptors, keyedBackend, M, setKey } from '../heap/fixtures.ts';
import { tempDirs } from '../../storage/fixtures.ts';
import { ManualTime, SETTINGS, settle } from './fixtures.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** Two subtasks (two operators' backends) of one process over `storage`, sharing one uploader. */
function twoSubtasks(storage: CheckpointStorage, time: ManualTime, settings = {}) {
  const share = new SharedLogUploader(storage.streamFactory(CHANGELOG_STREAMS_ID), time, 'run-1');
  const make = (who: string) =>
    new ChangelogKeyedStateBackend(
      keyedBackend(),
      { ...SETTINGS, uploadBytesThreshold: 1 << 20, ...settings },
      { streams: storage.streamFactory(CHANGELOG_STREAMS_ID), clock: time, scheduler: time, share },
      who,
    );
  return { share, a: make('a-0'), b: make('b-0') };
}

function put(b: KeyedStateBackend, prefix: string, keys: number, base: number): void {
  const value = b.getState<ValueState<number>>(descriptors.value);
  for (let k = 0; k < keys; k++) {
    setKey(b as never, `${prefix}${k}`);
    value.update(base + k);
  }
}

async function checkpoint(b: ChangelogKeyedStateBackend, id: number): Promise<ChangelogStateHandle> {
  const [h] = await b.snapshot(checkpointId(id), new InlineStreams(id)).run();
  return h as ChangelogStateHandle;
}

async function restoredValues(h: ChangelogStateHandle, storage: CheckpointStorage): Promise<Array<[unknown, unknown]>> {
  const b = keyedBackend({ start: 0, end: M - 1 });
  for (const d of Object.values(descriptors)) b.getState(d);
  await b.restore([h], (s: StreamStateHandle) => storage.readState(s));
  return b.entries('value').sort((x, y) => String(x[0]).localeCompare(String(y[0])));
}

const storages: Array<[string, () => Promise<CheckpointStorage>]> = [
  ['memory', async () => new MemoryCheckpointStorage(jobId('job'), { inlineThresholdBytes: 0 })],
  ['file system', async () => new FsCheckpointStorage(await dirs.make(), jobId('job'), { inlineThresholdBytes: 0 })],
];

describe.each(storages)('shared changelog uploads (%s storage)', (_name, open) => {
  it("puts two subtasks' batches ready together into one file; each restores exactly its own changes", async () => {
    const storage = await open();
    await storage.initialize();
    const time = new ManualTime();
    const { share, a, b } = twoSubtasks(storage, time);
    put(a, 'a', 30, 100);
    await time.advance(3);
    put(b, 'b', 20, 500);
    await time.advance(7); // the delay a armed runs out: both seal, one file
    expect(share.figures).toEqual({ files: 1, batches: 2 });
    const files = (await storage.listSharedFiles!()).filter((p) => p.includes('changelog-shared-run-1-'));
    expect(files).toHaveLength(1);
    const [ha, hb] = [await checkpoint(a, 1), await checkpoint(b, 1)];
    for (const h of [ha, hb]) {
      expect(h.segments).toHaveLength(1);
      expect(h.segments[0]!.stream).toMatchObject({ type: 'range', path: files[0] });
    }
    const [ra, rb] = [ha.segments[0]!.stream, hb.segments[0]!.stream];
    if (ra.type !== 'range' || rb.type !== 'range') throw new Error('not ranges');
    expect(ra.offset).toBe(0);
    expect(rb.offset).toBe(ra.length); // b's batch follows a's in the file
    expect(await restoredValues(ha, storage)).toEqual(a.entries('value').sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    expect(await restoredValues(hb, storage)).toEqual(b.entries('value').sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    expect((await restoredValues(ha, storage)).every(([k]) => String(k).startsWith('a'))).toBe(true);
  });

  it('a batch sealed by a checkpoint with no delay running is written on the next turn; one alone keeps a whole-file handle', async () => {
    const storage = await open();
    await storage.initialize();
    const time = new ManualTime();
    const { share, a } = twoSubtasks(storage, time);
    put(a, 'a', 5, 1);
    const h = await Promise.all([checkpoint(a, 1), time.advance(0)]).then(([x]) => x);
    expect(share.figures).toEqual({ files: 1, batches: 1 });
    expect(h.segments[0]!.stream.type).toBe('file');
  });

  it('a failed shared file fails each batch in it; each subtask retries on its own and keeps its in-flight bytes', async () => {
    const storage = await open();
    await storage.initialize();
    const time = new ManualTime();
    const inner = storage.streamFactory(CHANGELOG_STREAMS_ID);
    let failNext = 1;
    const flaky = {
      checkpointId: inner.checkpointId,
      write: (scope: 'shared' | 'exclusive', hint: string, data: Uint8Array) =>
        failNext-- > 0 ? Promise.reject(new Error('injected')) : inner.write(scope, hint, data),
    };
    const share = new SharedLogUploader(flaky, time, 'run-2');
    const make = (who: string) =>
      new ChangelogKeyedStateBackend(
        keyedBackend(),
        { ...SETTINGS, uploadBytesThreshold: 1 << 20 },
        { streams: flaky, clock: time, scheduler: time, share },
        who,
      );
    const [a, b] = [make('a-0'), make('b-0')];
    put(a, 'a', 10, 1);
    put(b, 'b', 10, 1);
    await time.advance(10);
    // The retry's write is real I/O on the file system (its fsync off the thread): wait for it to land.
    await vi.waitFor(() => expect(b.changelogFigures()).toMatchObject({ uploads: 1 }), { timeout: 30_000 });
    expect(a.changelogFigures()).toMatchObject({ retries: 1, uploads: 1, inFlightBytes: 0 });
    expect(b.changelogFigures()).toMatchObject({ retries: 1, uploads: 1, inFlightBytes: 0 });
    expect(share.figures.files).toBe(2);
    const h = await checkpoint(b, 1);
    expect(await restoredValues(h, storage)).toHaveLength(10);
  });
});

describe('shared changelog uploads that hang', () => {
  it('time out and give up per subtask, holding each subtask back while its bytes are in flight', async () => {
    const time = new ManualTime();
    const hanging = { checkpointId: checkpointId(0), write: () => new Promise<StreamStateHandle>(() => undefined) };
    const share = new SharedLogUploader(hanging, time, 'run-3');
    const settings = { ...SETTINGS, uploadBytesThreshold: 1 << 20, uploadTimeoutMs: 50, uploadAttemptsMax: 2, inFlightBytesMax: 1 };
    const make = (who: string) => new ChangelogKeyedStateBackend(keyedBackend(), settings, { streams: hanging, clock: time, scheduler: time, share }, who);
    const [a, b] = [make('a-0'), make('b-0')];
    put(a, 'a', 5, 1);
    put(b, 'b', 5, 1);
    await time.advance(10);
    expect(share.figures).toEqual({ files: 1, batches: 2 });
    expect([a.backpressured, b.backpressured]).toEqual([true, true]);
    await time.advance(50); // the first attempts time out; each subtask tries again, together again
    expect(share.figures).toEqual({ files: 2, batches: 4 });
    expect(a.changelogFigures()).toMatchObject({ retries: 1, failures: 0 });
    await time.advance(50);
    for (const x of [a, b]) {
      expect(x.changelogFigures()).toMatchObject({ retries: 1, failures: 1, inFlightBytes: 0 });
      expect(x.backpressured).toBe(false);
    }
    await expect(checkpoint(a, 1)).rejects.toThrow(/failed after 2 attempts: .*did not finish within 50 ms/);
  });
});

describe('a corrupt range of a shared file', () => {
  async function sharedFile(storage?: CheckpointStorage) {
    storage ??= new FsCheckpointStorage(await dirs.make(), jobId('job'), { inlineThresholdBytes: 0 });
    await storage.initialize();
    const time = new ManualTime();
    const { a, b } = twoSubtasks(storage, time);
    put(a, 'a', 30, 100);
    put(b, 'b', 30, 500);
    await time.advance(10);
    await settle();
    const [ha, hb] = [await checkpoint(a, 1), await checkpoint(b, 1)];
    const ra = ha.segments[0]!.stream;
    const rb = hb.segments[0]!.stream;
    if (ra.type !== 'range' || rb.type !== 'range') throw new Error('not ranges');
    return { storage, ra, rb, ha, hb };
  }

  async function readError(storage: CheckpointStorage, h: StreamStateHandle): Promise<StorageError> {
    try {
      await storage.readState(h);
    } catch (err) {
      expect(err).toBeInstanceOf(StorageError);
      return err as StorageError;
    }
    throw new Error('expected a StorageError');
  }

  it('is reported naming the file and the range; the other range of the file still reads', async () => {
    const { storage, ra, rb, ha } = await sharedFile();
    const bytes = readFileSync(rb.path);
    bytes[ENVELOPE_HEADER_BYTES + rb.offset + 7]! ^= 0xff;
    writeFileSync(rb.path, bytes);
    const err = await readError(storage, rb);
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.file).toBe(rb.path);
    expect(err.message).toContain(`${rb.path}: body bytes ${rb.offset} to ${rb.offset + rb.length}: checksum mismatch`);
    expect((await storage.readState(ra)).byteLength).toBe(ra.length);
    expect(await restoredValues(ha, storage)).toHaveLength(30);
  });

  it('a torn file (cut short) is reported naming the file and the range', async () => {
    const { storage, rb } = await sharedFile();
    truncateSync(rb.path, ENVELOPE_HEADER_BYTES + rb.offset + 3);
    const err = await readError(storage, rb);
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(`${rb.path}: body bytes ${rb.offset} to ${rb.offset + rb.length}: truncated`);
  });

  it('a corrupt range in memory storage is reported the same way', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job'), { inlineThresholdBytes: 0 });
    const { rb } = await sharedFile(storage);
    storage.rawFiles().get(rb.path)![ENVELOPE_HEADER_BYTES + rb.offset]! ^= 0x01;
    const err = await readError(storage, rb);
    expect(err.message).toContain(`${rb.path}: body bytes ${rb.offset} to ${rb.offset + rb.length}: checksum mismatch`);
  });
});
