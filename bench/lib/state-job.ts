/**
 * The keyed count job of the state scenario (generate -> keyBy -> ValueState count per key ->
 * summing sink, parallelism 1, a checkpoint every `checkpointIntervalMs`), on the heap or the
 * embedded backend, with the checksum its sink must reach. Shared by bench/scenarios/state.ts and
 * the child process that measures one backend's memory and CPU alone (state-scale-child.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { CheckpointStats, KeyedProcessFunction, Sink, ValueState } from '../../src/index.ts';
import { startTimer } from './result.ts';

export type StateBackendName = 'heap' | 'embedded';

/** Record i's key: a permutation of the key space repeated, so every key appears. */
const STRIDE = 7_919;
export const keyIndex = (i: number, keys: number): number => (i * STRIDE) % keys;

/** Sum over keys of 1 + 2 + ... + count: what the sink sees summed when every count is emitted. */
export function expectedChecksum(keys: number, records: number): number {
  const counts = new Uint32Array(keys);
  for (let i = 0; i < records; i++) counts[keyIndex(i, keys)]!++;
  let sum = 0;
  for (const c of counts) sum += (c * (c + 1)) / 2;
  return sum;
}

function keyedCount(): KeyedProcessFunction<string, string, number> {
  let count: ValueState<number>;
  return {
    open(ctx) {
      count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
    },
    processElement(_key, _ctx, out) {
      const n = (count.value() ?? 0) + 1;
      count.update(n);
      out.collect(n);
    },
  };
}

export interface StateJobRun {
  readonly recordsPerSec: number;
  /** CPU time of the whole process (every thread) during the job, in seconds. */
  readonly cpuSeconds: number;
  readonly checkpoints: CheckpointStats[];
  readonly checksum: number;
}

export async function runStateJob(
  backend: StateBackendName,
  keys: number,
  records: number,
  cacheEntriesMax: number,
  checkpointIntervalMs: number,
): Promise<StateJobRun> {
  const dir = mkdtempSync(join(tmpdir(), 'weir-bench-state-'));
  try {
    const env = StreamEnvironment.create({
      parallelism: 1,
      restartStrategy: { type: 'none' },
      checkpointing: { intervalMs: checkpointIntervalMs },
      checkpointStorage: dir,
      ...(backend === 'embedded' ? { stateBackend: 'embedded' as const, embeddedState: { cacheEntriesMax } } : {}),
    });
    let checksum = 0;
    const sink: Sink<number> = { name: 'sum', kind: 'plain', createWriter: () => ({ write: (n: number) => void (checksum += n) }) };
    env
      .generate({ count: records, seed: 1 }, (i) => `key-${keyIndex(i, keys)}`)
      .uid('keys')
      .keyBy((k) => k)
      .process(keyedCount)
      .uid('count')
      .sinkTo(sink)
      .uid('sink');
    (globalThis as { gc?: () => void }).gc?.();
    const t = startTimer();
    const result = await env.execute(`bench-state-${backend}`);
    const { ms, cpuMs } = t();
    if (result.status !== 'FINISHED') throw new Error(`${backend} job ended ${result.status}`);
    return {
      recordsPerSec: records / (ms / 1000),
      cpuSeconds: cpuMs / 1000,
      checkpoints: result.checkpoints.filter((c) => c.status === 'COMPLETED'),
      checksum,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
