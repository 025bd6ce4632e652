import { describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import {
  onAborted,
  onCompleted,
  onEndOfData,
  onFinalTriggered,
  onStopRequested,
  periodicAllowed,
  RUNNING,
  type Ending,
} from '../../../src/checkpoint/coordinator/job-ending.ts';

const id = checkpointId;

describe('how checkpointing ends', () => {
  it('end of data wants a final checkpoint; its failure wants it again; its completion finishes', () => {
    let e: Ending = onEndOfData(RUNNING);
    expect(e).toEqual({ phase: 'end-of-data' });
    expect(periodicAllowed(e)).toBe(false);
    e = onFinalTriggered(e, id(7));
    expect(e).toEqual({ phase: 'final-pending', checkpointId: 7 });
    expect(onAborted(e, id(6))).toBe(e);
    e = onAborted(e, id(7));
    expect(e).toEqual({ phase: 'end-of-data' });
    e = onCompleted(onFinalTriggered(e, id(8)), id(8), true);
    expect(e).toEqual({ phase: 'finished', checkpointId: 8 });
  });

  it('a failed stop-with-savepoint lets the job go on, or wait for its final checkpoint when the sources ended meanwhile', () => {
    const stopping = onStopRequested(RUNNING, id(3))!;
    expect(periodicAllowed(stopping)).toBe(false);
    expect(onAborted(stopping, id(3))).toEqual(RUNNING);
    expect(onAborted(onEndOfData(stopping), id(3))).toEqual({ phase: 'end-of-data' });
    expect(onCompleted(stopping, id(3), true)).toEqual({ phase: 'finished', checkpointId: 3 });
  });

  it('refuses a second stop and a stop while the final checkpoint is in flight or done', () => {
    expect(onStopRequested(onStopRequested(RUNNING, id(3))!, id(4))).toBeNull();
    expect(onStopRequested(onFinalTriggered(onEndOfData(RUNNING), id(5)), id(6))).toBeNull();
    expect(onStopRequested({ phase: 'finished', checkpointId: id(5) }, id(6))).toBeNull();
    expect(onStopRequested(onEndOfData(RUNNING), id(6))).toEqual({ phase: 'stopping', savepointId: 6, endOfData: true });
  });

  it('a completed ordinary checkpoint changes nothing', () => {
    expect(onCompleted(RUNNING, id(2), false)).toBe(RUNNING);
  });
});
