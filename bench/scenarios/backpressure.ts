/**
 * backpressure: checkpoints of a two-input job whose sink is slowed to a fixed rate, so every
 * channel is full. Three ways, same interval and timeout:
 *
 *   aligned          barriers queue behind the full buffers and wait for them to drain
 *   unaligned        barriers overtake the queued buffers, which are persisted with the checkpoint
 *   aligned_timeout  aligned, switching to unaligned after 100 ms of alignment
 *
 * Two generated sources (parallelism 2) are keyed and connected into a keyed two-input counter,
 * whose output is rebalanced to a sink (parallelism 2, its own subtasks) that admits records at a
 * fixed rate per subtask by waiting for its time budget. Each mode runs for a fixed wall time, then
 * the job is cancelled; checkpoints still in progress then are not counted. Modes are interleaved
 * over rounds; figures pool the checkpoints of all rounds of a mode.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { CheckpointStats, KeyedCoProcessFunction, Sink, ValueState } from '../../src/index.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, type Figures } from '../lib/result.ts';
import { sleep } from '../../src/core/adapters.ts';

const SCENARIO = 'backpressure';
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  runSeconds: args.quick ? 2 : 12,
  rounds: args.quick ? 1 : 2,
  parallelism: 2,
  sinkRecordsPerSecPerSubtask: 20_000,
  checkpointIntervalMs: 500,
  checkpointTimeoutMs: args.quick ? 3_000 : 10_000,
  alignedCheckpointTimeoutMs: 100,
  // Small buffers, many of them: the sink's waiting happens inside one buffer's processing, and this
  // runtime runs all subtasks on one thread, so a 512-record buffer at 20k records/s would hold every
  // other subtask for 26 ms. 64 records keep that to about 3 ms while the channels still hold 4096.
  bufferRecords: 64,
  channelCapacityBuffers: 64,
};

type Mode = 'aligned' | 'unaligned' | 'aligned_timeout';
const MODES: readonly Mode[] = ['aligned', 'unaligned', 'aligned_timeout'];

interface Event {
  readonly key: number;
  readonly v: number;
}

/** Admits `rate` records per second: a sink writing to a slow external system. */
function slowSink(rate: number): Sink<unknown> {
  return {
    name: 'slow-sink',
    kind: 'plain',
    createWriter: () => {
      let admitted = 0;
      let start = -1;
      return {
        write: () => {
          const now = performance.now();
          if (start < 0) start = now;
          const due = start + (admitted * 1000) / rate;
          while (performance.now() < due) {
            // waiting for the external system's budget
          }
          admitted++;
        },
      };
    },
  };
}

async function runMode(mode: Mode): Promise<CheckpointStats[]> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-bp-'));
  try {
    const env = StreamEnvironment.create({
      parallelism: params.parallelism,
      checkpointing: {
        intervalMs: params.checkpointIntervalMs,
        timeoutMs: params.checkpointTimeoutMs,
        tolerableFailures: 1_000_000,
        ...(mode === 'unaligned' ? { unaligned: true } : {}),
        ...(mode === 'aligned_timeout' ? { unaligned: true, alignedCheckpointTimeoutMs: params.alignedCheckpointTimeoutMs } : {}),
      },
      checkpointStorage: dir,
      bufferRecords: params.bufferRecords,
      channelCapacity: params.channelCapacityBuffers,
    });
    const a = env.generate({ count: Infinity, seed: 1 }, (i): Event => ({ key: i % 1000, v: i })).uid('a');
    const b = env.generate({ count: Infinity, seed: 2 }, (i): Event => ({ key: (i * 7) % 1000, v: i })).uid('b');
    a.keyBy((e) => e.key)
      .connect(b.keyBy((e) => e.key))
      .process((): KeyedCoProcessFunction<number, Event, Event, number> => {
        let n: ValueState<number>;
        return {
          open(ctx) {
            n = ctx.getState(new ValueStateDescriptor<number>('n', 0));
          },
          processElement1(e, _ctx, out) {
            n.update(n.value()! + 1);
            out.collect(e.v);
          },
          processElement2(e, _ctx, out) {
            n.update(n.value()! + 1);
            out.collect(e.v);
          },
        };
      })
      .uid('count')
      .rebalance()
      .sinkTo(slowSink(params.sinkRecordsPerSecPerSubtask))
      .uid('sink')
      .disableChaining();
    const client = await env.executeAsync(`backpressure-${mode}`);
    await sleep(params.runSeconds * 1000);
    await client.cancel();
    const result = await client.result;
    return result.checkpoints.filter((c) => c.status !== 'IN_PROGRESS');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const stats: Record<Mode, CheckpointStats[]> = { aligned: [], unaligned: [], aligned_timeout: [] };
  for (let round = 0; round < params.rounds; round++) {
    for (const mode of MODES) {
      const done = await runMode(mode);
      stats[mode].push(...done);
      const ok = done.filter((c) => c.status === 'COMPLETED');
      console.log(
        `[${SCENARIO}] round ${round + 1} ${mode}: ${ok.length}/${done.length} completed, median ${ok.length ? median(ok.map((c) => c.durationMs)).toFixed(1) : '-'} ms`,
      );
    }
  }
  const metrics: Figures = {};
  for (const mode of MODES) {
    const all = stats[mode];
    const ok = all.filter((c) => c.status === 'COMPLETED');
    if (ok.length === 0) throw new Error(`${mode}: no checkpoint completed in ${params.runSeconds} s`);
    const inflight = ok.map((c) => c.subtasks.reduce((sum, s) => sum + s.metrics.channelStateBytes, 0));
    metrics[`${mode}_duration_median_ms`] = median(ok.map((c) => c.durationMs));
    metrics[`${mode}_duration_max_ms`] = Math.max(...ok.map((c) => c.durationMs));
    metrics[`${mode}_completed_share`] = ok.length / all.length;
    metrics[`${mode}_checkpoints_triggered`] = all.length;
    metrics[`${mode}_persisted_bytes_median`] = median(ok.map((c) => c.persistedBytes));
    metrics[`${mode}_inflight_bytes_median`] = median(inflight);
    metrics[`${mode}_unaligned_share`] = ok.filter((c) => c.subtasks.some((s) => s.metrics.unaligned)).length / ok.length;
  }
  const ratios: Figures = {
    unaligned_speedup: metrics.aligned_duration_median_ms! / metrics.unaligned_duration_median_ms!,
    aligned_timeout_speedup: metrics.aligned_duration_median_ms! / metrics.aligned_timeout_duration_median_ms!,
  };
  const result = buildResult(SCENARIO, params, metrics, ratios);
  publishResult(result, args.outDir);
}

runScenario(SCENARIO, main);
