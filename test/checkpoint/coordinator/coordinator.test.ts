import { describe, expect, it } from 'vitest';
import { listCompletedCheckpoints } from '../../../src/checkpoint/restore/checkpoint-listing.ts';
import { CheckpointCoordinator, type CoordinatorContext } from '../../../src/checkpoint/coordinator/coordinator.ts';
import type { CheckpointingConfig } from '../../../src/checkpoint/coordinator/config.ts';
import { CompletedCheckpointStore } from '../../../src/checkpoint/coordinator/completed-checkpoint-store.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import type { CheckpointBarrier } from '../../../src/checkpoint/barrier/barrier.ts';
import type { TaskId } from '../../../src/core/ids.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';
import { ManualEnvironment } from '../../support/manual-env.ts';

const config = (over: Partial<CheckpointingConfig> = {}): CheckpointingConfig => ({
  intervalMs: 100,
  mode: 'exactly-once',
  timeoutMs: 1000,
  maxConcurrent: 1,
  minPauseMs: 0,
  tolerableFailures: 0,
  retained: 2,
  retainOnCancel: false,
  unaligned: false,
  alignedCheckpointTimeoutMs: 0,
  ...over,
});

const TASKS: TaskId[] = [
  { vertex: 0, subtask: 0 },
  { vertex: 1, subtask: 0 },
];

function setup(over: Partial<CheckpointingConfig> = {}) {
  const time = new ManualEnvironment();
  const advance = (ms: number) => time.advance(ms);
  const triggered: CheckpointBarrier[] = [];
  const completed: number[] = [];
  const aborted: number[] = [];
  const failures: Error[] = [];
  const ctx: CoordinatorContext = {
    allTasksRunning: () => true,
    expectedTasks: () => TASKS,
    operators: () => [
      { uid: 'src', name: 'src', parallelism: 1, maxParallelism: 128 },
      { uid: 'op', name: 'op', parallelism: 1, maxParallelism: 128 },
    ],
    triggerSources: (b) => triggered.push(b),
    notifyComplete: (id) => completed.push(id),
    notifyAborted: (id) => aborted.push(id),
    failJob: (e) => failures.push(e),
    log: () => {},
  };
  const storage = new MemoryCheckpointStorage(jobId('j'));
  const coordinator = new CheckpointCoordinator(jobId('j'), config(over), storage, time.environment, ctx);
  const ack = (id: number, task: TaskId, uid: string) =>
    coordinator.receiveAck({
      task,
      checkpointId: checkpointId(id),
      operators: [{ uid, keyed: [], operator: null, channels: [] }],
      metrics: {
        syncMs: 1,
        asyncMs: 2,
        alignmentMs: 0,
        alignmentRecords: 0,
        persistedBytes: 10,
        stateBytes: 10,
        channelStateBytes: 0,
        unaligned: false,
        barrierArrivalsMs: [],
        buffersAhead: [],
        syncStartMs: 0,
      },
    });
  const ackAll = (id: number) => {
    ack(id, TASKS[0]!, 'src');
    ack(id, TASKS[1]!, 'op');
  };
  return { coordinator, triggered, completed, aborted, failures, advance, ackAll, ack, storage };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('CheckpointCoordinator', () => {
  it('triggers on the interval and completes when every subtask acknowledged and metadata is written', async () => {
    const t = setup();
    t.coordinator.start();
    t.advance(100);
    expect(t.triggered.map((b) => b.checkpointId)).toEqual([1]);
    t.ack(1, TASKS[0]!, 'src');
    await flush();
    expect(t.completed).toEqual([]);
    t.ack(1, TASKS[1]!, 'op');
    await flush();
    expect(t.completed).toEqual([1]);
    expect((await listCompletedCheckpoints(t.storage)).map((c) => c.checkpointId)).toEqual([1]);
  });

  it('never has more than maxConcurrent checkpoints pending', () => {
    const t = setup({ maxConcurrent: 1 });
    t.coordinator.start();
    t.advance(500);
    expect(t.triggered.length).toBe(1);
    expect(t.coordinator.numPending).toBe(1);
  });

  it('waits minPause after a completion before the next trigger', async () => {
    const t = setup({ intervalMs: 10, minPauseMs: 250 });
    t.coordinator.start();
    t.advance(10);
    t.ackAll(1);
    await flush();
    t.advance(200);
    expect(t.triggered.length).toBe(1);
    t.advance(100);
    expect(t.triggered.length).toBe(2);
  });

  it('aborts an expired checkpoint, and past tolerableFailures fails the job', async () => {
    const t = setup({ timeoutMs: 50, tolerableFailures: 1 });
    t.coordinator.start();
    t.advance(100 + 50);
    expect(t.aborted).toEqual([1]);
    expect(t.coordinator.history[0]!.failureReason).toBe('EXPIRED');
    expect(t.failures).toEqual([]);
    t.advance(100);
    expect(t.aborted).toEqual([1, 2]);
    expect(t.failures.length).toBe(1);
    expect(t.failures[0]!.message).toContain('tolerableFailures=1');
  });

  it('a success resets the count of consecutive failures', async () => {
    const t = setup({ timeoutMs: 50, tolerableFailures: 1 });
    t.coordinator.start();
    t.advance(150);
    expect(t.coordinator.failureCount).toBe(1);
    t.advance(50);
    t.ackAll(2);
    await flush();
    expect(t.completed).toEqual([2]);
    expect(t.coordinator.failureCount).toBe(0);
  });

  it('keeps the retained count and deletes subsumed checkpoints', async () => {
    const t = setup({ retained: 2 });
    t.coordinator.start();
    for (let id = 1; id <= 5; id++) {
      t.advance(100);
      t.ackAll(id);
      await flush();
    }
    await flush();
    expect(t.completed).toEqual([1, 2, 3, 4, 5]);
    expect((await listCompletedCheckpoints(t.storage)).map((c) => c.checkpointId)).toEqual([4, 5]);
  });

  it('ignores late and duplicate acknowledgements', async () => {
    const t = setup({ timeoutMs: 50 });
    t.coordinator.start();
    t.advance(150);
    t.ackAll(1);
    await flush();
    expect(t.completed).toEqual([]);
  });

  it('a decline aborts the checkpoint', () => {
    const t = setup({ tolerableFailures: 5 });
    t.coordinator.start();
    t.advance(100);
    t.coordinator.receiveDecline(TASKS[1]!, checkpointId(1), 'UPLOAD_FAILED', new Error('disk full'));
    expect(t.aborted).toEqual([1]);
    expect(t.coordinator.history[0]!.failureMessage).toContain('disk full');
  });
});

describe('CheckpointCoordinator while the job finishes', () => {
  it('refuses on-demand checkpoints and plain savepoints once the final checkpoint is wanted (a later barrier would undo the final one)', async () => {
    const t = setup({ intervalMs: 10_000 });
    t.coordinator.start();
    t.coordinator.allReachedEndOfData();
    expect(t.triggered.map((b) => [b.checkpointId, b.options.isFinal])).toEqual([[1, true]]);
    await expect(t.coordinator.triggerNow()).rejects.toThrow('cannot trigger a checkpoint: the job is finishing (final-pending)');
    await expect(
      t.coordinator.triggerSavepoint(() => {
        throw new Error('no target expected');
      }, false),
    ).rejects.toThrow('cannot take a savepoint');
    t.ackAll(1);
    await flush();
    expect(t.completed).toEqual([1]);
    await expect(t.coordinator.triggerNow()).rejects.toThrow('the job is finishing (finished)');
    expect(t.triggered.length).toBe(1);
  });
});

describe('CheckpointCoordinator after a failed stop-with-savepoint', () => {
  it('takes the final checkpoint when every source ended while the stop was in flight (sim seed 7903)', async () => {
    const t = setup({ intervalMs: 10_000, timeoutMs: 50 });
    t.coordinator.start();
    const stop = t.coordinator.triggerSavepoint(
      () => ({
        location: 'memory:sp',
        streamFactory: () => t.storage.streamFactory(checkpointId(1)),
        commitMetadata: async () => 'memory:sp',
        discardIncomplete: async () => {},
      }),
      true,
    );
    t.coordinator.allReachedEndOfData();
    expect(t.triggered.map((b) => [b.checkpointId, b.options.kind, b.options.isFinal])).toEqual([[1, 'savepoint', true]]);
    t.advance(50); // the stop expires
    await expect(stop).rejects.toThrow('checkpoint 1 failed');
    t.advance(100);
    expect(t.triggered.map((b) => [b.checkpointId, b.options.kind, b.options.isFinal])).toEqual([
      [1, 'savepoint', true],
      [2, 'checkpoint', true],
    ]);
  });
});

describe('CheckpointCoordinator after an aborted savepoint', () => {
  it('refuses a late upload of it into the checkpoint directory and leaves no file there (sim seed 1047)', async () => {
    const t = setup({ intervalMs: 10_000, timeoutMs: 50 });
    t.coordinator.start();
    const savepoint = t.coordinator.triggerSavepoint(
      () => ({
        location: 'memory:sp',
        streamFactory: () => ({ checkpointId: checkpointId(1), write: async () => ({ type: 'inline', data: new Uint8Array(0), crc32: 0 }) as never }),
        commitMetadata: async () => 'memory:sp',
        discardIncomplete: async () => {},
      }),
      false,
    );
    t.advance(50); // the savepoint expires while a subtask still uploads
    await expect(savepoint).rejects.toThrow('checkpoint 1 failed');
    await flush();
    // The subtask's upload asks for the stream factory only now: the savepoint is no longer pending.
    const late = t.coordinator.streamFactory(checkpointId(1)).write('exclusive', 'keyed-op-0', new Uint8Array(4096));
    await expect(late).rejects.toThrow('aborted and discarded');
    expect([...t.storage.rawFiles().keys()].filter((f) => f.includes('/chk-1/'))).toEqual([]);
  });
});

describe('CompletedCheckpointStore', () => {
  it('returns what falls out of the retained window, oldest first', () => {
    const store = new CompletedCheckpointStore(2);
    const cp = (id: number) => ({ checkpointId: checkpointId(id), metadata: {} as never, location: `l${id}`, kind: 'checkpoint' as const });
    expect(store.add(cp(1))).toEqual([]);
    expect(store.add(cp(2))).toEqual([]);
    expect(store.add(cp(3)).map((c) => c.checkpointId)).toEqual([1]);
    expect(store.all().map((c) => c.checkpointId)).toEqual([3, 2]);
    expect(() => store.add(cp(2))).toThrow(/not newer/);
  });
});

describe('CheckpointCoordinator with maxConcurrent 2 (found by the simulator)', () => {
  it('an older checkpoint whose metadata lands after a newer one is subsumed, not retained', async () => {
    const time = new ManualEnvironment();
    const completed: number[] = [];
    const ctx: CoordinatorContext = {
      allTasksRunning: () => true,
      expectedTasks: () => TASKS,
      operators: () => [
        { uid: 'src', name: 'src', parallelism: 1, maxParallelism: 128 },
        { uid: 'op', name: 'op', parallelism: 1, maxParallelism: 128 },
      ],
      triggerSources: () => {},
      notifyComplete: (id) => completed.push(id),
      notifyAborted: () => {},
      failJob: () => {},
      log: () => {},
    };
    const inner = new MemoryCheckpointStorage(jobId('j'));
    const gates = new Map<number, () => void>();
    // Metadata writes complete only when the test opens their gate.
    const storage = Object.create(inner) as MemoryCheckpointStorage;
    storage.commitMetadata = async (id, bytes) => {
      await new Promise<void>((resolve) => gates.set(id, resolve));
      return inner.commitMetadata(id, bytes);
    };
    const coordinator = new CheckpointCoordinator(jobId('j'), config({ maxConcurrent: 2, intervalMs: 10 }), storage, time.environment, ctx);
    const ackAll = (id: number) => {
      for (const [task, uid] of [
        [TASKS[0]!, 'src'],
        [TASKS[1]!, 'op'],
      ] as const) {
        coordinator.receiveAck({
          task,
          checkpointId: checkpointId(id),
          operators: [{ uid, keyed: [], operator: null, channels: [] }],
          metrics: {
            syncMs: 0,
            asyncMs: 0,
            alignmentMs: 0,
            alignmentRecords: 0,
            persistedBytes: 0,
            stateBytes: 0,
            channelStateBytes: 0,
            unaligned: false,
            barrierArrivalsMs: [],
            buffersAhead: [],
            syncStartMs: 0,
          },
        });
      }
    };
    coordinator.start();
    time.advance(20);
    ackAll(1);
    ackAll(2);
    await flush();
    gates.get(2)!();
    await flush();
    await flush();
    gates.get(1)!();
    await flush();
    await flush();
    expect(completed).toEqual([2]);
    expect(coordinator.store.all().map((c) => c.checkpointId)).toEqual([2]);
    expect((await listCompletedCheckpoints(inner)).map((c) => c.checkpointId)).toEqual([2]);
  });
});
