import { describe, expect, it } from 'vitest';
import { CheckpointCoordinator, type CoordinatorContext } from '../../../src/checkpoint/coordinator/coordinator.ts';
import type { CheckpointingConfig } from '../../../src/checkpoint/coordinator/config.ts';
import { minKnownCompleted, SharedStateFiles, SharedStateLedger } from '../../../src/checkpoint/coordinator/shared-state.ts';
import type { CheckpointMetadata } from '../../../src/checkpoint/metadata/metadata.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import type { TaskId } from '../../../src/core/ids.ts';
import type { ChangelogStateHandle } from '../../../src/state/handles/changelog.ts';
import type { IncrementalKeyGroupsStateHandle, IncrementalStateFile } from '../../../src/state/handles/incremental.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';
import { sharedStateFileHint } from '../../../src/storage/paths.ts';
import { rangeHandleFor } from '../../../src/storage/state-file.ts';
import { ManualEnvironment } from '../../support/manual-env.ts';

const c = checkpointId;
const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('SharedStateLedger', () => {
  it('counts references across retained checkpoints under subsumption; a released file waits until no subtask can reuse it', () => {
    const l = new SharedStateLedger();
    expect(l.register(c(1), ['b1'])).toEqual([]);
    expect(l.register(c(2), ['b1', 'd2'])).toEqual([]);
    expect(l.register(c(3), ['b1', 'd2', 'd3'])).toEqual([]);
    expect(Object.fromEntries(l.counts())).toEqual({ b1: 3, d2: 2, d3: 1 });
    l.release(c(1), 2); // 1 subsumed; 2 is the oldest retained
    l.release(c(2), 3);
    expect(Object.fromEntries(l.counts())).toEqual({ b1: 1, d2: 1, d3: 1 });
    expect(l.takeDeletable(Infinity)).toEqual([]); // all still referenced by 3
    expect(l.register(c(4), ['b4'])).toEqual([]); // a new base
    l.release(c(3), 4);
    expect(Object.fromEntries(l.releasedFiles())).toEqual({ b1: 4, d2: 4, d3: 4 });
    // The newest checkpoint shows a subtask that only knows checkpoint 3 completed: it may still extend 3's chain.
    expect(l.takeDeletable(3)).toEqual([]);
    expect(l.takeDeletable(4).sort()).toEqual(['b1', 'd2', 'd3']);
    expect(l.register(c(5), ['b4', 'd2'])).toEqual(['d2']); // reusing a deleted file: the checkpoint must fail
    expect(l.isRegistered(c(5))).toBe(false);
  });

  it('a checkpoint that still refers to a released file takes it back', () => {
    const l = new SharedStateLedger();
    l.register(c(1), ['b1']);
    l.release(c(1), 2);
    expect(l.register(c(2), ['b1', 'd2'])).toEqual([]);
    expect(l.takeDeletable(Infinity)).toEqual([]);
    expect(l.counts().get('b1')).toBe(1);
  });

  it('aborted checkpoints register nothing; their uploads are orphans, pinned files never are', () => {
    const l = new SharedStateLedger();
    l.register(c(1), ['b1']);
    l.release(c(2), 1); // aborted before it completed: unknown to the registry
    l.pin(['kept']);
    expect(l.claimOrphans(['b1', 'ckpt-2-upload', 'kept'])).toEqual(['ckpt-2-upload']);
    expect(l.claimOrphans(['ckpt-2-upload'])).toEqual([]); // handed out once
    l.releaseAll();
    expect(l.takeAllReleased()).toEqual(['b1']);
  });

  it('minKnownCompleted: the lowest known completed checkpoint over incremental handles', () => {
    const handle = (known: number | null): IncrementalKeyGroupsStateHandle => ({
      type: 'incremental-key-groups',
      range: { start: 0, end: 0 },
      checkpointId: 9,
      knownCompletedCheckpointId: known,
      files: [],
      keyCounts: {},
    });
    const meta = (keyed: IncrementalKeyGroupsStateHandle[]): CheckpointMetadata => ({
      jobId: jobId('j'),
      checkpointId: c(9),
      timestampMs: 0,
      kind: 'checkpoint',
      operators: [
        {
          uid: 'op',
          name: 'op',
          parallelism: keyed.length,
          maxParallelism: 128,
          subtasks: keyed.map((h, i) => ({ subtask: i, keyed: [h], operator: null, channels: [] })),
        },
      ],
    });
    expect(minKnownCompleted(meta([]))).toBe(Infinity);
    expect(minKnownCompleted(meta([handle(7), handle(5)]))).toBe(5);
    expect(minKnownCompleted(meta([handle(7), handle(null)]))).toBe(-Infinity);
  });
});

const config: CheckpointingConfig = {
  intervalMs: null,
  mode: 'exactly-once',
  timeoutMs: 1_000_000,
  maxConcurrent: 1,
  minPauseMs: 0,
  tolerableFailures: 100,
  retained: 1,
  retainOnCancel: false,
  unaligned: false,
  alignedCheckpointTimeoutMs: 0,
};

const TASK: TaskId = { vertex: 0, subtask: 0 };

/** A coordinator of one keyed subtask whose acks carry incremental chains the test writes itself. */
function harness(files = new Map<string, Uint8Array>()) {
  const storage = new MemoryCheckpointStorage(jobId('j'), { inlineThresholdBytes: 0, files });
  const logs: string[] = [];
  const ctx: CoordinatorContext = {
    allTasksRunning: () => true,
    expectedTasks: () => [TASK],
    operators: () => [{ uid: 'op', name: 'op', parallelism: 1, maxParallelism: 128 }],
    triggerSources: () => {},
    notifyComplete: () => {},
    notifyAborted: () => {},
    failJob: () => {},
    log: (m) => logs.push(m),
  };
  const coordinator = new CheckpointCoordinator(jobId('j'), config, storage, new ManualEnvironment().environment, ctx);
  const upload = async (id: number, kind: 'base' | 'delta'): Promise<IncrementalStateFile> => {
    const stream: StreamStateHandle = await storage.streamFactory(c(id)).write('shared', sharedStateFileHint(id, `${kind}-op-0`), new Uint8Array([id]));
    return { kind, checkpointId: id, offsets: [], stream };
  };
  const ack = (id: number, files: IncrementalStateFile[], known: number | null) =>
    coordinator.receiveAck({
      task: TASK,
      checkpointId: c(id),
      operators: [
        {
          uid: 'op',
          keyed: [{ type: 'incremental-key-groups', range: { start: 0, end: 127 }, checkpointId: id, knownCompletedCheckpointId: known, files, keyCounts: {} }],
          operator: null,
          channels: [],
        },
      ],
      metrics: {
        syncMs: 0,
        asyncMs: 0,
        alignmentMs: 0,
        alignmentRecords: 0,
        persistedBytes: 1,
        stateBytes: files.length,
        channelStateBytes: 0,
        unaligned: false,
        barrierArrivalsMs: [],
        buffersAhead: [],
        syncStartMs: 0,
      },
    });
  const sharedFiles = () =>
    [...files.keys()]
      .filter((p) => p.includes('/shared/'))
      .map((p) => p.slice(p.lastIndexOf('/') + 1).replace(/-op-0-\w+$/, ''))
      .sort();
  return { storage, coordinator, upload, ack, sharedFiles, logs };
}

describe('shared files through the coordinator', () => {
  it('deletes a file only when no retained checkpoint refers to it and no subtask can reuse it', async () => {
    const h = harness();
    h.coordinator.start();
    await flush();
    const complete = async (id: number, files: IncrementalStateFile[], known: number | null) => {
      const done = h.coordinator.triggerNow();
      h.ack(id, files, known);
      await done;
      await flush();
    };
    const b1 = await h.upload(1, 'base');
    await complete(1, [b1], null);
    const d2 = await h.upload(2, 'delta');
    await complete(2, [b1, d2], 1);
    expect(h.sharedFiles()).toEqual(['ckpt-1-base', 'ckpt-2-delta']);
    const b3 = await h.upload(3, 'base');
    await complete(3, [b3], 2); // a new base: 2 is subsumed, so b1 and d2 are released
    // The subtask never heard that 3 completed (a lost notice) and writes a new base of its own:
    // it still knows only 2, so it may extend 2's chain next time. b1 and d2 must stay.
    const b4 = await h.upload(4, 'base');
    await complete(4, [b4], 2);
    expect(h.sharedFiles()).toEqual(['ckpt-1-base', 'ckpt-2-delta', 'ckpt-3-base', 'ckpt-4-base']);
    const d5 = await h.upload(5, 'delta');
    await complete(5, [b1, d2, d5], 2); // it does: the files are taken back
    expect(h.coordinator.store.latest()?.checkpointId).toBe(5);
    // Its stale knowledge also keeps what 3 and 4 released.
    expect(h.sharedFiles()).toEqual(['ckpt-1-base', 'ckpt-2-delta', 'ckpt-3-base', 'ckpt-4-base', 'ckpt-5-delta']);
    // Now it learns of 5: once a checkpoint shows it knows 5, everything older may go.
    const b6 = await h.upload(6, 'base');
    await complete(6, [b6], 5);
    expect(h.sharedFiles()).toEqual(['ckpt-1-base', 'ckpt-2-delta', 'ckpt-5-delta', 'ckpt-6-base']);
    const d7 = await h.upload(7, 'delta');
    await complete(7, [b6, d7], 6);
    expect(h.sharedFiles()).toEqual(['ckpt-6-base', 'ckpt-7-delta']);
    await h.coordinator.shutdown(false);
    expect(h.sharedFiles()).toEqual([]);
  });

  it("deletes an aborted checkpoint's uploads, even one that lands after the abort began", async () => {
    const h = harness();
    h.coordinator.start();
    await flush();
    const b1 = await h.upload(1, 'base');
    void h.coordinator.triggerNow();
    h.ack(1, [b1], null);
    await flush();
    await h.upload(2, 'delta');
    void h.coordinator.triggerNow().catch(() => {});
    h.coordinator.receiveDecline(TASK, c(2), 'UPLOAD_FAILED');
    await flush();
    expect(h.sharedFiles()).toEqual(['ckpt-1-base']);
    await expect(h.upload(2, 'delta')).rejects.toThrow(/aborted and discarded/);
    expect(h.sharedFiles()).toEqual(['ckpt-1-base']);
  });

  it('a checkpoint reusing a file already deleted fails instead of completing', async () => {
    const h = harness();
    h.coordinator.start();
    await flush();
    const b1 = await h.upload(1, 'base');
    void h.coordinator.triggerNow();
    h.ack(1, [b1], null);
    await flush();
    const b2 = await h.upload(2, 'base');
    void h.coordinator.triggerNow();
    h.ack(2, [b2], 1);
    await flush();
    const b3 = await h.upload(3, 'base');
    void h.coordinator.triggerNow();
    h.ack(3, [b3], 2); // everyone knows 2: b1 (released when 2 subsumed 1) is deleted; b2 may still be extended
    await flush();
    expect(h.sharedFiles()).toEqual(['ckpt-2-base', 'ckpt-3-base']);
    const failed = h.coordinator.triggerNow();
    h.ack(4, [b1], 1); // a buggy subtask reusing b1
    await expect(failed).rejects.toThrow(/already deleted/);
    expect(h.coordinator.store.latest()?.checkpointId).toBe(3);
  });

  it('a crash between upload and metadata: the next start deletes the uploads; checkpoints it does not retain keep theirs', async () => {
    const files = new Map<string, Uint8Array>();
    const first = harness(files);
    first.coordinator.start();
    await flush();
    const b1 = await first.upload(1, 'base');
    void first.coordinator.triggerNow();
    first.ack(1, [b1], null);
    await flush();
    await first.upload(2, 'delta'); // uploaded; the process dies before checkpoint 2's metadata
    expect(first.sharedFiles()).toEqual(['ckpt-1-base', 'ckpt-2-delta']);

    const second = harness(files); // the job starts again in a new process
    const { highestCheckpointId } = await second.storage.initialize();
    second.coordinator.continueAfter(highestCheckpointId);
    second.coordinator.start();
    await flush();
    // Checkpoint 1 is complete in storage but not retained by this run (no claim): its files stay.
    expect(second.sharedFiles()).toEqual(['ckpt-1-base']);
    await second.coordinator.shutdown(false);
    expect(second.sharedFiles()).toEqual(['ckpt-1-base']);
  });

  it('never deletes files outside its own shared directory', async () => {
    const storage = new MemoryCheckpointStorage(jobId('j'), { inlineThresholdBytes: 0 });
    const other = new MemoryCheckpointStorage(jobId('other'), { files: storage.rawFiles(), inlineThresholdBytes: 0 });
    const foreign = await other.streamFactory(c(1)).write('shared', sharedStateFileHint(1, 'base-op-0'), new Uint8Array([1]));
    const s = new SharedStateFiles(storage, () => {});
    const meta: CheckpointMetadata = {
      jobId: jobId('j'),
      checkpointId: c(2),
      timestampMs: 0,
      kind: 'checkpoint',
      operators: [
        {
          uid: 'op',
          name: 'op',
          parallelism: 1,
          maxParallelism: 128,
          subtasks: [
            {
              subtask: 0,
              keyed: [
                {
                  type: 'incremental-key-groups',
                  range: { start: 0, end: 127 },
                  checkpointId: 2,
                  knownCompletedCheckpointId: 1,
                  files: [{ kind: 'base', checkpointId: 1, offsets: [], stream: foreign }],
                  keyCounts: {},
                },
              ],
              operator: null,
              channels: [],
            },
          ],
        },
      ],
    };
    expect(s.registerCompleting(meta)).toBeNull();
    await s.afterDiscard(c(2), () => undefined);
    await s.atShutdown(false);
    expect(storage.rawFiles().has((foreign as { path: string }).path)).toBe(true);
  });
});

describe('shared changelog log files (byte ranges of one file)', () => {
  it('a file stays while a retained checkpoint refers to any range of it, and is deleted once none does', async () => {
    const storage = new MemoryCheckpointStorage(jobId('j'), { inlineThresholdBytes: 0 });
    const streams = storage.streamFactory(c(0));
    const body = Uint8Array.from({ length: 40 }, (_, i) => i);
    const shared = await streams.write('shared', 'changelog-shared-run-0', body);
    const other = await streams.write('shared', 'changelog-shared-run-1', body.subarray(0, 10));
    if (shared.type !== 'file') throw new Error('expected a file');
    const range = (offset: number, length: number) => rangeHandleFor(shared.path, offset, body.subarray(offset, offset + length));
    const meta = (id: number, known: number | null, streams: StreamStateHandle[]): CheckpointMetadata => ({
      jobId: jobId('j'),
      checkpointId: c(id),
      timestampMs: 0,
      kind: 'checkpoint',
      operators: [
        {
          uid: 'op',
          name: 'op',
          parallelism: streams.length,
          maxParallelism: 128,
          subtasks: streams.map((stream, i) => ({
            subtask: i,
            keyed: [
              {
                type: 'changelog',
                range: { start: i, end: i },
                checkpointId: id,
                knownCompletedCheckpointId: known,
                materialization: { id: 0, seq: 0, handles: [] },
                segments: [{ fromSeq: 0, toSeq: 1, stream }],
                toSeq: 1,
                keyCounts: {},
              } satisfies ChangelogStateHandle,
            ],
            operator: null,
            channels: [],
          })),
        },
      ],
    });
    const s = new SharedStateFiles(storage, () => {});
    const exists = (p: string) => storage.rawFiles().has(p);
    // Checkpoint 1: two subtasks, each a range of the one file; it counts once.
    expect(s.registerCompleting(meta(1, null, [range(0, 20), range(20, 20)]))).toBeNull();
    expect(s.ledger.counts().get(shared.path)).toBe(1);
    const m2 = meta(2, 1, [range(20, 20), other]);
    expect(s.registerCompleting(m2)).toBeNull();
    expect(s.ledger.counts().get(shared.path)).toBe(2);
    s.discarding(c(1));
    await s.afterDiscard(c(1), () => 2);
    await s.afterCompleted(m2);
    expect(exists(shared.path)).toBe(true); // checkpoint 2 still refers to a range of it
    const m3 = meta(3, 2, [other]);
    expect(s.registerCompleting(m3)).toBeNull();
    s.discarding(c(2));
    await s.afterDiscard(c(2), () => 3);
    await s.afterCompleted(m3);
    expect(exists(shared.path)).toBe(true); // released, but a subtask that knows only checkpoint 2 may still reuse it
    const m4 = meta(4, 3, [other]);
    expect(s.registerCompleting(m4)).toBeNull();
    await s.afterCompleted(m4);
    expect(exists(shared.path)).toBe(false);
    expect(exists(other.type === 'file' ? other.path : '')).toBe(true);
  });
});
