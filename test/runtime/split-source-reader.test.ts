import { describe, expect, it } from 'vitest';
import type { Collector, RuntimeContext } from '../../src/runtime/functions.ts';
import { SplitSourceReader } from '../../src/runtime/split-source-reader.ts';
import type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from '../../src/runtime/split-source.ts';
import { ListStateDescriptor } from '../../src/state/descriptors.ts';
import { HeapOperatorStateBackend } from '../../src/state/heap/heap-operator-backend.ts';
import { runtimeContext } from '../support/runtime-context.ts';

/** A split reader the test scripts: `next` builds each fetch's batch (or throws); counts fetches and acks. */
class ScriptedReader implements SplitReader<number, SourceSplit, number> {
  fetches = 0;
  opened: SplitAssignment<SourceSplit, number>[] = [];
  acks: Array<[number, Map<string, number>]> = [];
  closed = false;
  constructor(private readonly next: (n: number) => SplitBatch<number, number> | null) {}
  async open(splits: readonly SplitAssignment<SourceSplit, number>[]): Promise<void> {
    this.opened = [...splits];
  }
  async fetch(): Promise<SplitBatch<number, number> | null> {
    return this.next(this.fetches++);
  }
  notifyCheckpointComplete(id: number, positions: ReadonlyMap<string, number>): void {
    this.acks.push([id, new Map(positions)]);
  }
  close(): void {
    this.closed = true;
  }
}

function sourceOf(
  reader: ScriptedReader,
  splits: SourceSplit[],
  extra: Partial<SplitSource<number, SourceSplit, number>> = {},
): SplitSource<number, SourceSplit, number> {
  return {
    name: 'scripted',
    bounded: true,
    enumerateSplits: () => splits,
    initialPosition: () => 0,
    createSplitReader: () => reader,
    ...extra,
  };
}

function contextOf(operatorState: HeapOperatorStateBackend, restored = false): RuntimeContext {
  return runtimeContext({ operatorState, restored });
}

/** Lets the fetch loop run until it waits on something the test controls. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

function collector(): Collector<number> & { records: number[] } {
  const records: number[] = [];
  return { records, collect: (r) => records.push(r) };
}

/** Batches of 100 records of split 'a': record i at position i + 1. */
const endless = (n: number): SplitBatch<number, number> => {
  const records = Array.from({ length: 100 }, (_, i) => n * 100 + i);
  return { splitId: 'a', records, positions: records.map((r) => r + 1) };
};

const STATE = new ListStateDescriptor<{ split: SourceSplit; position: number; ended: boolean }>('split-source-splits');

describe('SplitSourceReader', () => {
  it('the fetcher stops when the queue is full and goes on once poll drained it below the bound', async () => {
    const reader = new ScriptedReader(endless);
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }], { queueRecordsMax: 250 }));
    await r.open(contextOf(new HeapOperatorStateBackend({ uid: 'src', subtask: 0 })));
    await settle();
    expect(reader.fetches).toBe(3); // 300 queued >= 250: stopped
    const out = collector();
    expect(r.poll(out, 120).status).toBe('more');
    expect(out.records).toEqual(Array.from({ length: 120 }, (_, i) => i));
    await settle();
    expect(reader.fetches).toBe(4); // 180 < 250: one more batch, then 280 >= 250
    r.close();
  });

  it('snapshots the position after the last emitted record and hands a completed checkpoint its positions', async () => {
    const reader = new ScriptedReader(endless);
    const state = new HeapOperatorStateBackend({ uid: 'src', subtask: 0 });
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }], { queueRecordsMax: 1000 }));
    await r.open(contextOf(state));
    await settle();
    const out = collector();
    r.poll(out, 150);
    r.snapshotState(1);
    expect(state.getUnionListState(STATE).get()).toEqual([{ v: 1, split: { id: 'a' }, position: 150, ended: false }]);
    r.poll(out, 10);
    r.snapshotState(2);
    r.poll(out, 10);
    r.snapshotState(3);
    r.notifyCheckpointAborted(3);
    expect(reader.acks).toEqual([]); // nothing acknowledged before a completion
    await r.notifyCheckpointComplete(2);
    await r.notifyCheckpointComplete(1); // subsumed by 2: nothing more
    await r.notifyCheckpointComplete(3); // aborted: nothing
    expect(reader.acks).toEqual([[2, new Map([['a', 160]])]]);
    r.close();
  });

  it('restores positions from union state and opens the split reader with them', async () => {
    const state = new HeapOperatorStateBackend({ uid: 'src', subtask: 0 });
    state.getUnionListState(STATE).update([{ v: 1, split: { id: 'a' }, position: 42, ended: false } as never]);
    const reader = new ScriptedReader(() => null);
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }, { id: 'b' }]));
    await r.open(contextOf(state, true));
    expect(reader.opened).toEqual([
      { split: { id: 'a' }, position: 42 },
      { split: { id: 'b' }, position: 0 },
    ]);
    r.close();
  });

  it('a bounded source ends once every split ended and the queue is drained; ended splits stay in state', async () => {
    const reader = new ScriptedReader((n) => (n < 2 ? { splitId: n === 0 ? 'a' : 'b', records: [n], positions: [1], splitEnded: true } : null));
    const state = new HeapOperatorStateBackend({ uid: 'src', subtask: 0 });
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }, { id: 'b' }]));
    await r.open(contextOf(state));
    await settle();
    const out = collector();
    expect(r.poll(out, 10).status).toBe('end');
    expect(out.records).toEqual([0, 1]);
    r.snapshotState(1);
    expect(
      state
        .getUnionListState(STATE)
        .get()
        .map((e) => e.ended),
    ).toEqual([true, true]);
  });

  it('a failed fetch fails the next poll with its error; close stops fetching and closes the reader', async () => {
    const boom = new Error('server went away');
    const reader = new ScriptedReader((n) => {
      if (n === 1) throw boom;
      return endless(n);
    });
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }]));
    await r.open(contextOf(new HeapOperatorStateBackend({ uid: 'src', subtask: 0 })));
    await settle();
    expect(() => r.poll(collector(), 10)).toThrow(boom);
    r.close();
    expect(reader.closed).toBe(true);
  });

  it('an unbounded source with nothing queued asks to be polled again later', async () => {
    let release: (() => void) | null = null;
    const reader = new ScriptedReader(() => null);
    reader.fetch = () => new Promise((resolve) => (release = () => resolve({ splitId: 'a', records: [], positions: [] })));
    const r = new SplitSourceReader(sourceOf(reader, [{ id: 'a' }], { bounded: false, idlePollMs: 7 }));
    await r.open(contextOf(new HeapOperatorStateBackend({ uid: 'src', subtask: 0 })));
    expect(r.poll(collector(), 10)).toEqual({ status: 'wait', delayMs: 7 });
    r.close();
    release!();
  });
});
