import { describe, expect, it } from 'vitest';
import { BarrierOrder, checkBarrierOrder } from '../../src/sim/checkers/barrier-order.ts';
import { CommitLedger, RecoveryCommits } from '../../src/sim/checkers/commit-once.ts';
import { completedOnDisk, corruptAtRest, newestDurableId } from '../../src/sim/world/corruption.ts';
import { ExternalTransactionStore, ExternalTransactionalSink } from '../../src/sim/world/external-sink.ts';
import { describeKnobs, drawKnobs } from '../../src/sim/knobs.ts';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { FaultyStorage, type StorageFaultOptions } from '../../src/sim/world/faulty-storage.ts';
import { SimProcess } from '../../src/sim/world/sim-process.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import type { RuntimeContext } from '../../src/runtime/functions.ts';

const ctx = (subtaskIndex: number, runId: string) => ({ subtaskIndex, parallelism: 2, runId }) as unknown as RuntimeContext;

describe('simulator knobs', () => {
  it('are a pure draw of the seed: the same seed gives the same object, another seed another', () => {
    const inputs = { job: 'file-sink', mode: 'exactly-once' as const, builtIn: true };
    expect(drawKnobs(7, inputs)).toEqual(drawKnobs(7, inputs));
    expect(drawKnobs(8, inputs)).not.toEqual(drawKnobs(7, inputs));
    const lines = describeKnobs(drawKnobs(7, inputs));
    expect(lines[0]).toMatch(/^knobs: job file-sink, mode exactly-once, backend /);
    expect(lines.some((l) => l.includes('kills:'))).toBe(true);
  });

  it('run a share of the seeds over 2 or 3 in-memory task managers, and say so', () => {
    const inputs = { job: 'join', mode: 'exactly-once' as const, builtIn: true };
    const counts = new Map<number, number>();
    for (let seed = 1; seed <= 330; seed++) {
      const n = drawKnobs(seed, inputs).taskManagers;
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([1, 2, 3]);
    // A quarter in-thread, the rest over the transport.
    expect(counts.get(1)!).toBeGreaterThan(50);
    expect(counts.get(2)! + counts.get(3)!).toBeGreaterThan(150);
    expect(describeKnobs(drawKnobs(11, inputs))[0]).toContain('3 in-memory task managers');
    expect(describeKnobs(drawKnobs(1, inputs))[0]).toContain('in-thread');
    // Every mode runs over task managers, and so do seeds with a checkpoint corrupted at rest.
    expect(drawKnobs(200, { ...inputs, mode: 'unaligned' }).taskManagers).toBe(2);
    const corrupted = new Set<number>();
    for (let seed = 1; seed <= 300; seed++) {
      const k = drawKnobs(seed, inputs);
      if (k.corruption !== null) corrupted.add(k.taskManagers);
    }
    expect([...corrupted].sort()).toEqual([1, 2, 3]);
  });

  it('a user module fixes the parallelism it asks for', () => {
    const k = drawKnobs(3, { job: 'x.ts', mode: 'unaligned', builtIn: false, userOptions: { parallelism: 2, maxParallelism: 4 } });
    expect(k.parallelism).toBe(2);
    expect(k.maxParallelism).toBe(4);
    expect(k.rescale?.changeJob ?? false).toBe(false);
  });
});

describe('the barrier-order checker', () => {
  it('reports a barrier not newer than the last one on its channel, and nothing for a rising sequence', () => {
    expect(checkBarrierOrder(new Map([['a', [1, 2, 4, 3]]]))).toEqual(['a: barrier of checkpoint 3 after checkpoint 4']);
    expect(checkBarrierOrder(new Map([['a', [1, 2, 4, 5]]]))).toEqual([]);
    expect(checkBarrierOrder(new Map([['a', [1, 2, 2]]]))).toEqual(['a: barrier of checkpoint 2 after checkpoint 2']);
    // Each channel has its own order.
    expect(
      checkBarrierOrder(
        new Map([
          ['a', [4, 5]],
          ['b', [1, 2]],
        ]),
      ),
    ).toEqual([]);
  });

  it('observes snapshots through the fault injector, per process and subtask attempt, and still asks the inner injector', () => {
    const order = new BarrierOrder();
    const sites: string[] = [];
    const faults = order.observe(1, { check: (site) => void sites.push(site) });
    const at = (subtask: number, attempt: number, checkpointId?: number) => ({ vertex: 'src', subtask, attempt, checkpointId });
    faults.check('sync-phase', at(0, 0, 4));
    faults.check('process', at(0, 0));
    faults.check('sync-phase', at(1, 0, 2)); // another subtask
    faults.check('sync-phase', at(0, 1, 2)); // a new attempt restarts the order
    order.observe(2, { check: () => {} }).check('sync-phase', at(0, 0, 1)); // so does a new process
    expect(order.problems).toEqual([]);
    faults.check('sync-phase', at(0, 0, 3));
    expect(order.problems).toEqual(['process 1 src#0 attempt 0: barrier of checkpoint 3 after checkpoint 4']);
    expect(sites).toEqual(['sync-phase', 'process', 'sync-phase', 'sync-phase', 'sync-phase']);
  });
});

describe('a simulated process', () => {
  it('runs nothing it scheduled once killed; the world and other processes go on', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const dead = new SimProcess(world, 1);
    const alive = new SimProcess(world, 2);
    const ran: string[] = [];
    dead.execute(() => ran.push('dead now'));
    dead.schedule(5, () => ran.push('dead later'));
    alive.schedule(5, () => ran.push('alive later'));
    dead.kill();
    while (world.step());
    expect(ran).toEqual(['alive later']);
  });
});

describe('the external transactional store', () => {
  it('keeps open, prepared and committed transactions of a dead writer; commits once, repeats only on recovery', async () => {
    const ledger = new CommitLedger();
    const store = new ExternalTransactionStore(ledger);
    const sink = new ExternalTransactionalSink('out', store);
    const first = sink.createWriter();
    await first.open(ctx(0, 'r1'), []);
    first.write('a');
    const c1 = first.preCommit(1)!;
    first.write('b'); // open transaction, left behind by the death below
    first.dispose!();
    expect(store.committed()).toEqual([]);
    const second = sink.createWriter();
    await second.open(ctx(0, 'r2'), [c1]);
    await second.commit([c1]); // first commit, on recovery
    await second.commit([c1]); // a second commit outside recovery
    expect(store.committed()).toEqual([{ uid: 'out', record: 'a' }]);
    expect(ledger.firstCommits).toBe(1);
    expect(ledger.violations).toEqual([`transaction ${c1.transaction} was committed again outside recovery`]);
    expect(await sink.newestCommitted()).toBe(1);
    expect(await sink.rollBackAfter(0)).toMatch(/rolled back 1 committed transaction/);
    expect(store.committed()).toEqual([]);
  });

  it('a restored transaction may repeat once, in the first commit after open', () => {
    const r = new RecoveryCommits();
    r.opened(['t1']);
    const first = r.startCommit();
    expect(first('t1')).toBe(true);
    expect(first('t1')).toBe(false);
    expect(r.startCommit()('t1')).toBe(false);
  });

  it('a first commit before any _metadata of its checkpoint or a later one is durable is a violation', () => {
    let durable = 1;
    const ledger = new CommitLedger(() => durable);
    ledger.committed('t2', false, false, 2, 'p-a0');
    durable = 2;
    ledger.committed('t3', false, false, 2, 'p-a0');
    expect(ledger.violations).toEqual(['transaction t2 of checkpoint 2 was committed while the newest durable _metadata is of checkpoint 1']);
  });

  it("a repeat outside recovery is a violation unless a stale leader's writer makes it", () => {
    const ledger = new CommitLedger(() => 5);
    ledger.isStaleRun = (runId) => runId.startsWith('old-a');
    ledger.committed('t1', false, false, 3, 'new-a0');
    ledger.committed('t1', true, false, 3, 'old-a2');
    expect(ledger.staleRepeats).toBe(1);
    expect(ledger.violations).toEqual([]);
    ledger.committed('t1', true, false, 3, 'new-a1');
    expect(ledger.violations).toEqual(['transaction t1 was committed again outside recovery']);
  });
});

describe('corruption at rest', () => {
  const files = () =>
    new Map<string, Uint8Array>([
      ['memory:sim/chk-1/_metadata', new Uint8Array([1, 2, 3, 4])],
      ['memory:sim/chk-2/_metadata', new Uint8Array([5, 6, 7, 8])],
      ['memory:sim/chk-2/keyed-x-0-a', new Uint8Array([9, 9, 9, 9])],
      ['memory:sim/chk-3/keyed-x-0-b', new Uint8Array([1])],
      ['memory:savepoints/savepoint-4-abcdef/_metadata', new Uint8Array([1])],
    ]);

  it('hits only the newest completed checkpoint, and only when an older one is there to fall back to', () => {
    const f = files();
    expect(completedOnDisk(f, 'memory:sim')).toEqual([1, 2]);
    expect(newestDurableId(f, 'memory:sim', 'memory:savepoints')).toBe(4);
    const hit = corruptAtRest(f, 'memory:sim', { afterMs: 0, target: 'state-file', how: 'truncate', followedBy: 'restart' }, (n) => (n > 1 ? 1 : 0))!;
    expect(hit).toEqual({ checkpointId: 2, file: 'memory:sim/chk-2/keyed-x-0-a', dir: 'memory:sim/chk-2' });
    expect(f.get(hit.file)).toEqual(new Uint8Array([9]));
    f.delete('memory:sim/chk-1/_metadata');
    expect(corruptAtRest(f, 'memory:sim', { afterMs: 0, target: 'metadata', how: 'flip', followedBy: 'kill' }, () => 0)).toBeNull();
  });
});

/** Steps the world until `p` settles (storage calls complete through its scheduler). */
async function drive<T>(world: SimWorld, p: Promise<T>): Promise<T> {
  let done = false;
  const out = p.finally(() => {
    done = true;
  });
  out.catch(() => undefined);
  for (let i = 0; !done && i < 10_000; i++) {
    world.step();
    await new Promise((r) => setImmediate(r));
  }
  return out;
}

describe('the object-store storage model', () => {
  const world = () => new SimWorld(5, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
  const NO_FAULTS = { writeFailProbability: 0, tornWriteProbability: 0, renameFailProbability: 0, latencyMsMax: 1 };
  const objectStore = (w: SimWorld, o: Partial<StorageFaultOptions>) =>
    new FaultyStorage(jobId('os'), w, w.random, { ...NO_FAULTS, objectStore: { latePutDelayMsMax: 20 }, ...o });

  it('a PUT whose request timed out fails for the writer and lands later, in a checkpoint that has no _metadata', async () => {
    const w = world();
    const s = objectStore(w, { tornWriteProbability: 1 });
    const err = await drive(w, s.streamFactory(checkpointId(1)).write('exclusive', 'k', new Uint8Array(200).fill(7))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toContain('lands later');
    // No torn object: nothing is there yet, then the whole object.
    expect(s.files()).toEqual([]);
    while (w.step());
    expect(s.objectStore.latePuts).toBe(1);
    expect(s.files()).toEqual([...s.lateLanded]);
    expect(s.files()[0]).toMatch(/\/chk-1\/k-/);
    expect(await s.listCheckpointDirs()).toEqual([{ checkpointId: 1, location: s.checkpointLocation(checkpointId(1)), hasMetadata: false }]);
  });

  it('_metadata is one create-only PUT: no temporary file, lost or answered-late PUTs, a second _metadata refused', async () => {
    const w = world();
    const s = objectStore(w, { renameFailProbability: 1 });
    const outcomes: string[] = [];
    for (let id = 1; id <= 12; id++) {
      const bytes = new Uint8Array([id, 1, 2, 3]);
      const done = await drive(w, s.commitMetadata(checkpointId(id), bytes)).then(
        () => 'committed',
        (e: unknown) => (e instanceof StorageError ? 'lost' : String(e)),
      );
      outcomes.push(done);
      const stored = s.inner.rawFiles().get(`${s.checkpointLocation(checkpointId(id))}/_metadata`);
      // Committed only with our own bytes (the create-only retry recognised them); a lost PUT left nothing.
      expect(stored === undefined ? 'lost' : Array.from(stored).join() === Array.from(bytes).join() ? 'committed' : 'other bytes').toBe(done);
    }
    expect(s.files().filter((f) => f.includes('.tmp'))).toEqual([]);
    expect(outcomes).toContain('lost');
    expect(outcomes).toContain('committed');
    expect(s.objectStore.lostUploads + s.objectStore.metadataAnswersLost).toBe(12);
    // A second writer of a committed checkpoint's _metadata (another client of the same bucket).
    const other = new FaultyStorage(jobId('os'), w, w.random, { ...NO_FAULTS, objectStore: { latePutDelayMsMax: 20 } }, s.inner.rawFiles());
    const id = checkpointId(outcomes.indexOf('committed') + 1);
    const refused = await drive(w, other.commitMetadata(id, new Uint8Array([9]))).catch((e: unknown) => e);
    expect((refused as StorageError).message).toContain('create-only _metadata refused');
  });
});
