/** The CDC reader's batches: a position per change describing the state after it, marks folded into the change before them. */
import { describe, expect, it } from 'vitest';
import { copyPosition, slotOf, START_POSITION, streamPosition, streamStart, txOf } from '../../../../src/connectors/postgres/cdc/cdc-position.ts';
import { ChangeBatcher, type Entry } from '../../../../src/connectors/postgres/cdc/change-batches.ts';
import { ChangeQueue } from '../../../../src/connectors/postgres/cdc/change-queue.ts';
import type { ChangeRecord } from '../../../../src/connectors/postgres/index.ts';

const slot = slotOf('weir_cdc_x', 'weir_cdc_x', '0/100', []);

function queueOf(entries: readonly Entry[]): ChangeQueue<Entry> {
  const q = new ChangeQueue<Entry>(
    1000,
    () => {},
    () => {},
  );
  for (const e of entries) q.push(e);
  return q;
}

const ins = (id: number, lsn: string): ChangeRecord => ({
  kind: 'insert',
  schema: 's',
  table: 't',
  lsn,
  commitTimeMs: 1,
  snapshot: false,
  before: null,
  after: { id },
});
const row = (id: number): ChangeRecord => ({
  kind: 'insert',
  schema: 's',
  table: 't',
  lsn: '0/100',
  commitTimeMs: null,
  snapshot: true,
  before: null,
  after: { id, v: 0 },
});

describe('ChangeBatcher', () => {
  it('gives each streamed change the position after it, and a transaction whole once its commit followed the change', () => {
    const b = new ChangeBatcher(streamStart(slot), null);
    const q = queueOf([
      { kind: 'begin', lsn: '0/200', emitted: 0 },
      ins(1, '0/200'),
      ins(2, '0/200'),
      { kind: 'commit', lsn: '0/200', endLsn: '0/230' },
      { kind: 'begin', lsn: '0/300', emitted: 0 },
      ins(3, '0/300'),
    ]);
    const batch = b.take(q, 100)!;
    expect(batch.records.map((r) => r.after?.id)).toEqual([1, 2, 3]);
    expect(batch.positions).toEqual([
      streamPosition(slot, txOf('0/0', '0/100', '0/200'), 1),
      // the commit (and the next begin) came before the next change: the transaction is whole
      streamPosition(slot, txOf('0/200', '0/230', '0/300'), 0),
      streamPosition(slot, txOf('0/200', '0/230', '0/300'), 1),
    ]);
    expect(batch.endPosition).toBeUndefined();
    expect(batch.splitEnded).toBe(false);
    for (const p of batch.positions) expect(Object.isFrozen(p)).toBe(true);
    expect(q.size).toBe(0);
    expect(b.take(q, 100)).toBe(null);
  });

  it('moves the position by endPosition when a batch holds only marks, and counts changes a restore skipped', () => {
    const b = new ChangeBatcher(streamPosition(slot, txOf('0/200', '0/230', '0/300'), 2), null);
    const q = queueOf([{ kind: 'begin', lsn: '0/300', emitted: 2 }, ins(3, '0/300'), ins(4, '0/300'), { kind: 'commit', lsn: '0/300', endLsn: '0/330' }]);
    const first = b.take(q, 3)!;
    expect(first.positions).toEqual([streamPosition(slot, txOf('0/200', '0/230', '0/300'), 3), streamPosition(slot, txOf('0/200', '0/230', '0/300'), 4)]);
    const second = b.take(q, 3)!;
    expect(second.records).toEqual([]);
    expect(second.endPosition).toEqual(streamPosition(slot, txOf('0/300', '0/330', '0/0'), 0));
  });

  it('gives copy rows the rows copied and the key of the last one, and passes to the stream at the end of the copy', () => {
    const b = new ChangeBatcher(START_POSITION, null);
    const key = { columns: ['id'], kinds: ['number'] } as const;
    const q = queueOf([
      { kind: 'position', position: copyPosition(slot, 0, 0, null) },
      { kind: 'table', table: 1, key },
      row(5),
      row(6),
      { kind: 'snapshot-end' },
    ]);
    const batch = b.take(q, 100)!;
    expect(batch.positions).toEqual([copyPosition(slot, 1, 1, [5]), streamStart(slot)]);
    expect(Object.isFrozen((batch.positions[0] as { key: unknown }).key)).toBe(true);
    // the setup placing the slot alone moves the position too
    const fresh = new ChangeBatcher(START_POSITION, null);
    expect(fresh.take(queueOf([{ kind: 'position', position: copyPosition(slot, 0, 0, null) }]), 100)!.endPosition).toEqual(copyPosition(slot, 0, 0, null));
    expect(fresh.take(queueOf([{ kind: 'table', table: 0, key: null }]), 100)).toBe(null);
  });

  it('ends the split at the change the end condition holds for, leaving the rest', () => {
    const b = new ChangeBatcher(streamStart(slot), (c) => c.after?.id === 2);
    const q = queueOf([{ kind: 'begin', lsn: '0/200', emitted: 0 }, ins(1, '0/200'), ins(2, '0/200'), ins(3, '0/200')]);
    const batch = b.take(q, 100)!;
    expect(batch.records.map((r) => r.after?.id)).toEqual([1, 2]);
    expect(batch.splitEnded).toBe(true);
    expect(b.ended).toBe(true);
    expect(q.size).toBe(1);
  });

  it('defers an end condition that holds before the stream caught up with a resumed copy, and carries the deferral in the position across a restore', () => {
    // a copy resumed after key [10] from a snapshot at 0/500: commits up to 0/500 must be replayed first
    const resumed = slotOf('weir_cdc_x', 'weir_cdc_x', '0/100', [{ table: 0, key: [10], lsn: '0/500' }]);
    const key = { columns: ['id'], kinds: ['number'] } as const;
    const endsAt99 = (c: ChangeRecord): boolean => c.after?.id === 99;
    const b = new ChangeBatcher(copyPosition(resumed, 10, 0, [10]), endsAt99);
    const q = queueOf([
      { kind: 'table', table: 0, key },
      row(11),
      row(99),
      { kind: 'snapshot-end' },
      { kind: 'begin', lsn: '0/300', emitted: 0 },
      ins(5, '0/300'),
    ]);
    const batch = b.take(q, 100)!;
    expect(batch.records.map((r) => r.after?.id)).toEqual([11, 99, 5]);
    expect(batch.splitEnded).toBe(false);
    expect(batch.positions[0]).toEqual(copyPosition(resumed, 11, 0, [11]));
    // the marks after the match fold into its position: the copy ended, the replay began
    expect(batch.positions[1]).toEqual(streamPosition(resumed, txOf('0/0', '0/100', '0/300'), 0, true));
    const pending = batch.positions[2]!;
    expect(pending).toEqual(streamPosition(resumed, txOf('0/0', '0/100', '0/300'), 1, true));
    // restored at that position (the match is not emitted again): the commit and the caught-up mark end it
    const after = new ChangeBatcher(pending, endsAt99);
    const end = after.take(queueOf([{ kind: 'commit', lsn: '0/300', endLsn: '0/330' }, { kind: 'caught-up' }, ins(6, '0/600')]), 100)!;
    expect(end.records).toEqual([]);
    expect(end.splitEnded).toBe(true);
    expect(end.endPosition).toEqual(streamPosition(resumed, txOf('0/300', '0/330', '0/0'), 0, true));
    expect(after.ended).toBe(true);
    // without a resumed copy, or once caught up, the match ends the split at once
    const caughtUp = new ChangeBatcher(streamPosition(resumed, txOf('0/600', '0/630', '0/0'), 0), endsAt99);
    expect(caughtUp.take(queueOf([{ kind: 'begin', lsn: '0/700', emitted: 0 }, ins(99, '0/700'), ins(7, '0/700')]), 100)!.splitEnded).toBe(true);
  });
});
