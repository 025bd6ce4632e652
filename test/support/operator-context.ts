/** An OperatorContext for driving one operator outside a job: heap operator state, a still clock, no output. */
import type { KeyedStateBackend } from '../../src/state/backend.ts';
import type { OperatorContext, Output } from '../../src/runtime/operator.ts';
import { newElementTimestamp } from '../../src/runtime/time/element-timestamp.ts';
import { MailboxProcessingTimeService } from '../../src/runtime/time/processing-time.ts';
import { HeapOperatorStateBackend } from '../../src/state/heap/heap-operator-backend.ts';
import { ManualEnvironment } from './manual-env.ts';

export const NO_OUTPUT: Output = { collect: () => {}, sideOutput: () => {}, emitWatermark: () => {}, emitWatermarkStatus: () => {} };

export function operatorContext(
  o: {
    uid?: string;
    subtask?: number;
    parallelism?: number;
    restored?: boolean;
    operatorState?: HeapOperatorStateBackend;
    keyedBackend?: KeyedStateBackend | null;
    output?: Output;
  } = {},
): OperatorContext {
  const time = new ManualEnvironment();
  const uid = o.uid ?? 'op';
  return {
    uid,
    name: uid,
    subtaskIndex: o.subtask ?? 0,
    parallelism: o.parallelism ?? 1,
    maxParallelism: 128,
    attempt: 0,
    runId: 'run-0',
    output: o.output ?? NO_OUTPUT,
    keyedBackend: o.keyedBackend ?? null,
    operatorState: o.operatorState ?? new HeapOperatorStateBackend({ uid, subtask: o.subtask ?? 0 }),
    clock: time,
    restored: o.restored ?? false,
    timestamps: newElementTimestamp(),
    processingTime: new MailboxProcessingTimeService(time, time),
    autoWatermarkIntervalMs: 200,
    timeServices: null,
    getInternalTimerService: () => {
      throw new Error('no timer services outside a keyed operator');
    },
  };
}
