/**
 * A small running job for the REST, metrics and dashboard tests: two held sources, keyed and
 * connected into a two-input counting operator (so barriers align there), into a sink. It runs
 * until the test cancels it; the test lets records through with the gate and triggers checkpoints.
 */
import type { JobMaster } from '../../src/cluster/job-master/job-master.ts';
import {
  CollectSink,
  type JobClient,
  type KeyedCoProcessFunction,
  StreamEnvironment,
  type StreamEnvironmentOptions,
  type ValueState,
  ValueStateDescriptor,
} from '../../src/index.ts';
import { heldGenerate, SourceGate } from './held-source.ts';

export interface RunningWebJob {
  readonly client: JobClient;
  readonly master: JobMaster;
  readonly gate: SourceGate;
  readonly env: StreamEnvironment;
}

type Row = { key: string; i: number };

export interface WebJobOptions {
  readonly parallelism?: number;
  readonly checkpointStorage?: string;
  readonly unaligned?: boolean;
  /** The match operator's subtask 0 throws once, on attempt 0, at this record of its first input. */
  readonly throwAtRecord?: number;
  /** The two-input operator's name; default 'match'. */
  readonly matchName?: string;
  /** `checkpointing.intervalMs`; default none (the test triggers checkpoints). */
  readonly intervalMs?: number;
  /** The state backend; default the environment's. */
  readonly stateBackend?: StreamEnvironmentOptions['stateBackend'];
  /** Runs on this many in-memory task managers, task manager `i`'s clock `clockSkewMs[i]` ahead of the job master's; default in this thread. */
  readonly inMemoryTaskManagers?: { readonly count: number; readonly clockSkewMs?: readonly number[] };
}

export async function startWebJob(o: WebJobOptions = {}): Promise<RunningWebJob> {
  const gate = new SourceGate(0);
  const env = StreamEnvironment.create({
    parallelism: o.parallelism ?? 2,
    checkpointing: { retained: 3, ...(o.unaligned ? { unaligned: true } : {}), ...(o.intervalMs === undefined ? {} : { intervalMs: o.intervalMs }) },
    checkpointStorage: o.checkpointStorage ?? 'memory',
    restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 10 },
    bufferRecords: 16,
    channelCapacity: 4,
    ...(o.stateBackend === undefined ? {} : { stateBackend: o.stateBackend }),
  });
  const orders = heldGenerate(env, { count: 1_000_000, seed: 1 }, (i): Row => ({ key: `k${i % 13}`, i }), { gate })
    .uid('orders')
    .name('orders');
  const payments = heldGenerate(env, { count: 1_000_000, seed: 2 }, (i): Row => ({ key: `k${(i * 7) % 13}`, i }), { gate })
    .uid('payments')
    .name('payments');
  orders
    .keyBy((r) => r.key)
    .connect(payments.keyBy((r) => r.key))
    .process((): KeyedCoProcessFunction<string, Row, Row, string> => {
      let seen: ValueState<number>;
      let failing = false;
      let first = 0;
      return {
        open(ctx) {
          seen = ctx.getState(new ValueStateDescriptor<number>('seen', 0));
          failing = o.throwAtRecord !== undefined && ctx.attempt === 0 && ctx.subtaskIndex === 0;
        },
        processElement1(_r, ctx, out) {
          if (failing && ++first === o.throwAtRecord) throw new Error(`match failed at record ${first}`);
          seen.update((seen.value() ?? 0) + 1);
          out.collect(`${ctx.currentKey}`);
        },
        processElement2(_r, ctx, out) {
          seen.update((seen.value() ?? 0) + 1);
          out.collect(`${ctx.currentKey}`);
        },
      };
    })
    .uid('match')
    .name(o.matchName ?? 'match')
    .sinkTo(new CollectSink<string>())
    .uid('sink');
  let master: JobMaster | null = null;
  let running!: () => void;
  const isRunning = new Promise<void>((resolve) => (running = resolve));
  const tms = o.inMemoryTaskManagers;
  const skew = tms?.clockSkewMs;
  const client = await env.executeAsync('web-job', {
    ...(tms === undefined ? {} : { inMemoryTaskManagers: tms.count }),
    ...(skew === undefined ? {} : { taskManagerClockSkewMs: (index: number) => skew[index] ?? 0 }),
    onJobMaster: (m) => (master = m),
    onEvent: (e) => {
      if (e.type === 'running') running();
    },
  });
  await isRunning;
  return { client, master: master!, gate, env };
}
