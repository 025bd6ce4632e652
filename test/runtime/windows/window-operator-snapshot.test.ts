/**
 * The window operator's watermark is part of its snapshot: restored
 * from a snapshot taken at watermark 1,000, an element of time 150 is late at once, before any
 * new watermark arrives, as it was before the failure. Without the watermark in the snapshot the
 * restored operator starts at the minimum watermark and takes the element into a window.
 */
import { describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import { CollectSink, StreamEnvironment, TumblingEventTimeWindows } from '../../../src/index.ts';
import type { OperatorContext, Output } from '../../../src/runtime/operator.ts';
import { KeyedTimeServiceManager } from '../../../src/runtime/time/keyed-timer-service.ts';
import { WindowOperator } from '../../../src/runtime/windows/window-operator.ts';
import { assignToKeyGroup } from '../../../src/state/key-groups.ts';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import type { OperatorStateHandle } from '../../../src/storage/handles.ts';
import { operatorContext } from '../../support/operator-context.ts';
import { InlineStreams, inlineReader } from '../../state/helpers.ts';

interface Ev {
  readonly k: string;
  readonly ts: number;
  readonly v: number;
}

const MAX_PARALLELISM = 128;

/** The window operator a job builds for `keyBy(k).window(tumbling 100 ms).reduce(sum)`, uid 'w'. */
function windowOperator(): WindowOperator {
  const env = StreamEnvironment.create({ parallelism: 1, maxParallelism: MAX_PARALLELISM });
  env
    .fromElements<Ev>()
    .keyBy((e) => e.k)
    .window(TumblingEventTimeWindows.of(100))
    .reduce((a, b) => ({ ...a, v: a.v + b.v }))
    .uid('w')
    .sinkTo(new CollectSink<Ev>());
  const node = env
    .jobGraph()
    .vertices.flatMap((v) => v.chain)
    .find((n) => n.uid === 'w');
  const op = node?.createOperator();
  if (!(op instanceof WindowOperator)) throw new Error('no window operator with uid w');
  return op;
}

/** One window subtask owning every key group, on heap state; `emitted` collects its output. */
function windowSubtask(emitted: Ev[], operatorState = new HeapOperatorStateBackend({ uid: 'w', subtask: 0 })) {
  const keyed = new HeapKeyedStateBackend({ uid: 'w', subtask: 0, keyGroupRange: { start: 0, end: MAX_PARALLELISM - 1 }, maxParallelism: MAX_PARALLELISM });
  const base = operatorContext({ uid: 'w', operatorState, keyedBackend: keyed, restored: true });
  const timeServices = new KeyedTimeServiceManager(keyed, base.processingTime, base.timestamps);
  const output: Output = { ...base.output, collect: (r) => emitted.push(r as Ev) };
  const ctx: OperatorContext = {
    ...base,
    output,
    timeServices,
    getInternalTimerService: (name, triggerable) => timeServices.getInternalTimerService(name, triggerable),
  };
  const op = windowOperator();
  op.setup(ctx);
  const element = (e: Ev): void => {
    ctx.timestamps.current = e.ts;
    op.processElement(e, assignToKeyGroup(e.k, MAX_PARALLELISM), 0);
  };
  const snapshot = async (id: number): Promise<OperatorStateHandle | null> => {
    op.snapshotState(checkpointId(id));
    return operatorState.snapshot(checkpointId(id), new InlineStreams(id)).run();
  };
  return { op, element, snapshot };
}

describe('window operator snapshot', () => {
  it('carries the watermark: after a restore an element behind it is late before any new watermark', async () => {
    const before: Ev[] = [];
    const a = windowSubtask(before);
    a.op.open();
    a.element({ k: 'x', ts: 120, v: 1 });
    a.op.processWatermark(1_000);
    expect(before).toEqual([{ k: 'x', ts: 120, v: 1 }]); // window [100, 200) fired
    a.element({ k: 'x', ts: 150, v: 2 });
    expect(a.op.lateRecordsDropped).toBe(1);
    const handle = await a.snapshot(1);

    const after: Ev[] = [];
    const state = new HeapOperatorStateBackend({ uid: 'w', subtask: 0 });
    await state.restoreRedistributed([handle], inlineReader(), 0, 1);
    const b = windowSubtask(after, state);
    b.op.open();
    b.element({ k: 'x', ts: 150, v: 2 }); // replayed after the restore: as late as before the failure
    expect(b.op.lateRecordsDropped).toBe(1);
    b.op.processWatermark(1_100);
    expect(after).toEqual([]);
  });
});
