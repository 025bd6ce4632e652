/**
 * backpressure: checkpoints of a two-input job whose sink is slowed to a fixed rate, so every
 * channel is full. Three ways, same interval and timeout:
 *
 *   aligned          barriers queue behind the full buffers and wait for them to drain
 *   unaligned        barriers overtake the queued buffers, which are persisted with the checkpoint
 *   aligned_timeout  aligned, switching to unaligned after 100 ms of alignment
 *
 * and aligned and unaligned again on two task managers (worker threads; `_tm2`), where subtask i
 * runs in task manager i mod 2, so every kind of hop (trigger, source to counter, counter to sink,
 * acknowledgement) crosses threads for some subtasks.
 *
 * Two generated sources (parallelism 2) are keyed and connected into a keyed two-input counter,
 * whose output is rebalanced to a sink (parallelism 2, its own subtasks) that admits records at a
 * fixed rate per subtask by waiting for its time budget (bench/lib/backpressure-job.ts). Each mode
 * runs for a fixed wall time from its 'running' event, then the job is cancelled; checkpoints still in progress then are not
 * counted. Modes are interleaved over rounds; figures pool the checkpoints of all rounds of a mode.
 * For the unaligned modes, the job master's traces of the last few completed checkpoints give the
 * stages of a checkpoint: trigger to the last source's sync start, to the last counter's, to the
 * last sink's, to the last acknowledgement (stamps from different threads: within about 1 ms).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import type { CheckpointStats } from '../../src/index.ts';
import type { JobMaster } from '../../src/cluster/job-master/job-master.ts';
import type { CheckpointTrace } from '../../src/cluster/job-master/checkpoint-traces.ts';
import build from '../lib/backpressure-job.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, type Figures } from '../lib/result.ts';
import { sleep } from '../../src/core/adapters.ts';

const SCENARIO = 'backpressure';
const JOB_MODULE = fileURLToPath(new URL('../lib/backpressure-job.ts', import.meta.url));
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
  // Small buffers, many of them: the sink's waiting happens inside one buffer's processing, and
  // in-thread all subtasks share one thread, so a 512-record buffer at 20k records/s would hold every
  // other subtask for 26 ms. 64 records keep that to about 3 ms while the channels still hold 4096.
  bufferRecords: 64,
  channelCapacityBuffers: 64,
  // On task managers every channel holds as much as in-thread (not the default 4x), so the modes compare.
  remoteChannelCapacityBuffers: 64,
};

type Mode = 'aligned' | 'unaligned' | 'aligned_timeout' | 'aligned_tm2' | 'unaligned_tm2';
const MODES: readonly Mode[] = args.quick
  ? ['aligned', 'unaligned', 'aligned_timeout']
  : ['aligned', 'unaligned', 'aligned_timeout', 'aligned_tm2', 'unaligned_tm2'];

interface ModeRun {
  readonly checkpoints: CheckpointStats[];
  readonly traces: CheckpointTrace[];
  /** Vertex index -> stage ('source', 'count', 'sink'). */
  readonly stageOf: ReadonlyMap<number, string>;
}

async function runMode(mode: Mode): Promise<ModeRun> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-bp-'));
  const tm2 = mode.endsWith('_tm2');
  const unaligned = mode.startsWith('unaligned');
  try {
    process.env.BACKPRESSURE_SINK_RATE = String(params.sinkRecordsPerSecPerSubtask);
    const env = StreamEnvironment.create({
      parallelism: params.parallelism,
      checkpointing: {
        intervalMs: params.checkpointIntervalMs,
        timeoutMs: params.checkpointTimeoutMs,
        tolerableFailures: 1_000_000,
        ...(unaligned ? { unaligned: true } : {}),
        ...(mode === 'aligned_timeout' ? { unaligned: true, alignedCheckpointTimeoutMs: params.alignedCheckpointTimeoutMs } : {}),
      },
      checkpointStorage: dir,
      bufferRecords: params.bufferRecords,
      channelCapacity: params.channelCapacityBuffers,
      remoteChannelCapacity: params.remoteChannelCapacityBuffers,
      taskManagers: tm2 ? 2 : 'in-thread',
    });
    build(env);
    env.setJobModule(JOB_MODULE);
    let master: JobMaster | null = null;
    let markRunning: () => void = () => {};
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const client = await env.executeAsync(`backpressure-${mode}`, {
      onJobMaster: (m) => (master = m),
      onEvent: (e) => {
        if (e.type === 'running') markRunning();
      },
    });
    // The run time counts from running: worker start-up (seconds on a loaded machine) takes none of it.
    await Promise.race([running, client.result]);
    await sleep(params.runSeconds * 1000);
    const stageOf = new Map<number, string>();
    for (const t of (master as JobMaster | null)?.tasks ?? []) {
      stageOf.set(t.id.vertex, t.isSourceTask ? 'source' : t.name.includes('sink') ? 'sink' : 'count');
    }
    const traces = (master as JobMaster | null)?.traces.all() ?? [];
    await client.cancel();
    const result = await client.result;
    return { checkpoints: result.checkpoints.filter((c) => c.status !== 'IN_PROGRESS'), traces, stageOf };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const STAGES = ['source', 'count', 'sink'] as const;

/** Per completed trace: ms from the trigger to the last sync start of each stage, and to the last acknowledgement. */
function stageTimes(run: ModeRun, completed: ReadonlySet<number>): Array<Record<string, number>> {
  const out: Array<Record<string, number>> = [];
  for (const trace of run.traces) {
    if (!completed.has(trace.checkpointId) || trace.subtasks.length === 0) continue;
    const at: Record<string, number> = {};
    for (const stage of STAGES) {
      const starts = trace.subtasks.filter((s) => run.stageOf.get(s.vertex) === stage).map((s) => s.metrics.syncStartMs);
      if (starts.length > 0) at[stage] = Math.max(...starts) - trace.triggeredAtMs;
    }
    at.ack = Math.max(...trace.subtasks.map((s) => s.ackAtMs)) - trace.triggeredAtMs;
    out.push(at);
  }
  return out;
}

async function main(): Promise<void> {
  const runs = new Map<Mode, ModeRun[]>(MODES.map((m) => [m, []]));
  for (let round = 0; round < params.rounds; round++) {
    for (const mode of MODES) {
      const run = await runMode(mode);
      runs.get(mode)!.push(run);
      const ok = run.checkpoints.filter((c) => c.status === 'COMPLETED');
      console.log(
        `[${SCENARIO}] round ${round + 1} ${mode}: ${ok.length}/${run.checkpoints.length} completed, median ${ok.length ? median(ok.map((c) => c.durationMs)).toFixed(1) : '-'} ms`,
      );
    }
  }
  const metrics: Figures = {};
  for (const mode of MODES) {
    const all = runs.get(mode)!.flatMap((r) => r.checkpoints);
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
    if (mode.startsWith('unaligned')) {
      const completed = new Set<number>(ok.map((c) => c.checkpointId));
      const stages = runs.get(mode)!.flatMap((r) => stageTimes(r, completed));
      for (const key of [...STAGES, 'ack']) {
        const values = stages.map((s) => s[key]).filter((v): v is number => v !== undefined);
        if (values.length > 0) metrics[`${mode}_trigger_to_${key}_ms`] = median(values);
      }
      metrics[`${mode}_traced_checkpoints`] = stages.length;
    }
  }
  const ratios: Figures = {
    unaligned_speedup: metrics.aligned_duration_median_ms! / metrics.unaligned_duration_median_ms!,
    aligned_timeout_speedup: metrics.aligned_duration_median_ms! / metrics.aligned_timeout_duration_median_ms!,
  };
  if (metrics.unaligned_tm2_duration_median_ms !== undefined) {
    ratios.unaligned_speedup_tm2 = metrics.aligned_tm2_duration_median_ms! / metrics.unaligned_tm2_duration_median_ms!;
  }
  const result = buildResult(SCENARIO, params, metrics, ratios);
  publishResult(result, args.outDir);
}

runScenario(SCENARIO, main);
