/**
 * How the split-source reader uses a ReaderOutput: one output per split it reads, all taken at the
 * first poll before any record (so a split that has sent nothing holds the watermark back), each
 * split's records through its own output, a split's output released when the split ends.
 */
import { describe, expect, it } from 'vitest';
import type { Collector, ReaderOutput, SourceSplit, SplitBatch, SplitReader, SplitSource } from '../../src/index.ts';
import { isReaderOutput, SplitSourceReader } from '../../src/index.ts';
import { ListStateDescriptor } from '../../src/state/descriptors.ts';
import { HeapOperatorStateBackend } from '../../src/state/heap/heap-operator-backend.ts';
import { runtimeContext } from '../support/runtime-context.ts';

/** A ReaderOutput that logs what the reader asks of it and what each split's output receives. */
class LoggingOutput implements ReaderOutput<number> {
  readonly log: string[] = [];
  private readonly outputs = new Map<string, Collector<number>>();
  collect(record: number): void {
    this.log.push(`main:${record}`);
  }
  createOutputForSplit(splitId: string): Collector<number> {
    let output = this.outputs.get(splitId);
    if (output === undefined) {
      this.log.push(`create:${splitId}`);
      output = { collect: (r) => this.log.push(`${splitId}:${r}`) };
      this.outputs.set(splitId, output);
    }
    return output;
  }
  releaseOutputForSplit(splitId: string): void {
    this.log.push(`release:${splitId}`);
  }
}

/** Splits 'a', 'b', 'c': the batches `script` lists, then nothing (an unbounded source waiting). */
function source(script: SplitBatch<number, number>[]): SplitSource<number, SourceSplit, number> {
  let i = 0;
  const reader: SplitReader<number, SourceSplit, number> = {
    async open() {},
    async fetch() {
      const next = script[i++];
      return next ?? new Promise<never>(() => {});
    },
    close() {},
  };
  return {
    name: 'logged',
    bounded: false,
    enumerateSplits: () => [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
    initialPosition: () => 0,
    createSplitReader: () => reader,
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

const STATE = new ListStateDescriptor<unknown>('split-source-splits');

describe('SplitSourceReader with a ReaderOutput', () => {
  it('takes an output for every split at the first poll, emits each split through its own, releases a split when it ends', async () => {
    const r = new SplitSourceReader(
      source([
        { splitId: 'a', records: [1, 2], positions: [1, 2] },
        { splitId: 'b', records: [10], positions: [1], splitEnded: true },
        { splitId: 'a', records: [3], positions: [3] },
      ]),
    );
    await r.open(runtimeContext());
    await settle();
    const out = new LoggingOutput();
    expect(isReaderOutput(out)).toBe(true);
    expect(isReaderOutput({ collect() {} })).toBe(false);
    r.poll(out, 100);
    expect(out.log).toEqual(['create:a', 'create:b', 'create:c', 'a:1', 'a:2', 'b:10', 'release:b', 'a:3']);
    r.poll(out, 100); // the same output: nothing is taken again
    expect(out.log).toHaveLength(8);
    r.close();
  });

  it('a split restored as ended gets no output; a plain collector receives every split', async () => {
    const state = new HeapOperatorStateBackend({ uid: 'src', subtask: 0 });
    state.getUnionListState(STATE).update([{ v: 1, split: { id: 'c' }, position: 5, ended: true }]);
    const r = new SplitSourceReader(source([{ splitId: 'b', records: [7], positions: [1] }]));
    await r.open(runtimeContext({ operatorState: state, restored: true }));
    await settle();
    const out = new LoggingOutput();
    r.poll(out, 100);
    expect(out.log).toEqual(['create:a', 'create:b', 'b:7']);
    r.close();

    const plain = new SplitSourceReader(source([{ splitId: 'a', records: [4], positions: [1] }]));
    await plain.open(runtimeContext());
    await settle();
    const got: number[] = [];
    plain.poll({ collect: (x) => got.push(x) }, 100);
    expect(got).toEqual([4]);
    plain.close();
  });

  it('records of a split after the batch that ended it fail the poll, naming the split', async () => {
    const r = new SplitSourceReader(
      source([
        { splitId: 'a', records: [1], positions: [1], splitEnded: true },
        { splitId: 'a', records: [2], positions: [2] },
      ]),
    );
    await r.open(runtimeContext());
    await settle();
    expect(() => r.poll(new LoggingOutput(), 100)).toThrow(/fetched records of split 'a' after it ended/);
    r.close();
  });
});
