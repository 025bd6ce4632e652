/** Builds the RuntimeContext a user function sees from its operator's context. */
import { ConfigError } from '../../core/errors.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import type { StateDescriptor } from '../../state/descriptors.ts';
import type { RuntimeContext } from '../functions.ts';
import type { OperatorContext } from '../operator.ts';

export function createRuntimeContext(ctx: OperatorContext): RuntimeContext {
  const keyed = (descriptor: StateDescriptor): KeyedStateBackend => {
    if (!ctx.keyedBackend) {
      throw new ConfigError(
        `state '${descriptor.name}' of uid '${ctx.uid}'`,
        'keyed state is only available on a keyed stream (after keyBy); use getOperatorListState for non-keyed state',
      );
    }
    return ctx.keyedBackend;
  };
  return {
    uid: ctx.uid,
    subtaskIndex: ctx.subtaskIndex,
    parallelism: ctx.parallelism,
    maxParallelism: ctx.maxParallelism,
    attempt: ctx.attempt,
    runId: ctx.runId,
    restored: ctx.restored,
    clock: ctx.clock,
    getState: (d) => keyed(d).getState(d),
    getListState: (d) => keyed(d).getState(d),
    getMapState: (d) => keyed(d).getState(d),
    getReducingState: (d) => keyed(d).getState(d),
    getAggregatingState: (d) => keyed(d).getState(d),
    getOperatorListState: (d) => ctx.operatorState.getListState(d),
    getUnionListState: (d) => ctx.operatorState.getUnionListState(d),
  };
}
