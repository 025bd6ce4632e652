/** A RuntimeContext over a real heap operator state backend, for driving a reader or writer outside a job. */
import { systemClock } from '../../src/core/adapters.ts';
import type { RuntimeContext } from '../../src/runtime/functions.ts';
import { HeapOperatorStateBackend } from '../../src/state/heap/heap-operator-backend.ts';

export function runtimeContext(
  o: { operatorState?: HeapOperatorStateBackend; restored?: boolean; subtask?: number; parallelism?: number; runId?: string; uid?: string } = {},
): RuntimeContext {
  const operatorState = o.operatorState ?? new HeapOperatorStateBackend({ uid: o.uid ?? 'src', subtask: o.subtask ?? 0 });
  const keyed = (): never => {
    throw new Error('no keyed state outside a keyed stream');
  };
  return {
    uid: o.uid ?? 'src',
    subtaskIndex: o.subtask ?? 0,
    parallelism: o.parallelism ?? 1,
    maxParallelism: 128,
    attempt: 0,
    runId: o.runId ?? 'run-0',
    restored: o.restored ?? false,
    clock: systemClock,
    getState: keyed,
    getListState: keyed,
    getMapState: keyed,
    getReducingState: keyed,
    getAggregatingState: keyed,
    getOperatorListState: (d) => operatorState.getListState(d),
    getUnionListState: (d) => operatorState.getUnionListState(d),
  };
}
