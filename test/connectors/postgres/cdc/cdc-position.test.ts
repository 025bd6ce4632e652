/** The CDC source's pure parts: LSNs, names, the checkpointed position formats (2, and 1 converted), replay skipping, confirmations. */
import { describe, expect, it } from 'vitest';
import { slotNameOf, parseTableName } from '../../../../src/connectors/postgres/cdc/cdc-names.ts';
import {
  type CdcCopyPosition,
  checkPosition,
  confirmLsnOf,
  copyPosition,
  ReplayFilter,
  resumePointOf,
  START_POSITION,
  slotBehindCheck,
  slotOf,
  streamPosition,
  streamStart,
  txOf,
} from '../../../../src/connectors/postgres/cdc/cdc-position.ts';
import { convertPositionV1 } from '../../../../src/connectors/postgres/cdc/cdc-position-v1.ts';
import { decodeValue, encodeValue } from '../../../../src/state/codec.ts';
import { formatLsn, parseLsn } from '../../../../src/connectors/postgres/cdc/lsn.ts';
import { RestoreError } from '../../../../src/index.ts';

describe('LSNs', () => {
  it('parse and format X/Y, order as numbers', () => {
    expect(parseLsn('0/1E508A8')).toBe(0x1e508a8n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(formatLsn(parseLsn('00000000/0A000000'))).toBe('0/A000000');
    expect(parseLsn('1/0')).toBeGreaterThan(parseLsn('0/FFFFFFFF'));
    expect(() => parseLsn('12345')).toThrow(/'12345' is not an LSN/);
  });
});

describe('slot names and table names', () => {
  it('derives a valid slot name from the id, keeping distinct ids apart', () => {
    expect(slotNameOf('orders_cdc')).toBe('weir_cdc_orders_cdc');
    const a = slotNameOf('Orders-CDC');
    const b = slotNameOf('orders_cdc');
    expect(a).toMatch(/^[a-z0-9_]+$/);
    expect(a).not.toBe(b);
    const long = slotNameOf('x'.repeat(100));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).not.toBe(slotNameOf(`${'x'.repeat(99)}y`));
  });

  it('parses table and schema.table', () => {
    expect(parseTableName('t')).toEqual({ schema: 'public', table: 't' });
    expect(parseTableName('s.t')).toEqual({ schema: 's', table: 't' });
    expect(parseTableName('a.b.c')).toBe(null);
    expect(parseTableName('.t')).toBe(null);
  });
});

describe('the checkpointed position (format 3, and 2)', () => {
  const slot = slotOf('weir_cdc_x', 'weir_cdc_x', '0/100', [{ table: 0, key: [7], lsn: '0/180' }]);

  it('is frozen plain data that survives the state codec and passes the check after reading', () => {
    const tx = txOf('0/200', '0/230', '0/300');
    const positions = [START_POSITION, copyPosition(slot, 17, 0, [42]), streamPosition(slot, tx, 4), streamStart(slot), streamPosition(slot, tx, 4, true)];
    for (const p of positions) {
      expect(Object.isFrozen(p)).toBe(true);
      const read = decodeValue(encodeValue(p));
      expect(read).toEqual(p);
      expect(Object.isFrozen(read)).toBe(false);
      const checked = checkPosition(read, 'src');
      expect(checked).toEqual(p);
      expect(Object.isFrozen(checked)).toBe(true);
      if (checked.phase !== 'start') expect(Object.isFrozen(checked.slot.boundaries[0]!.key)).toBe(true);
    }
    expect(Object.isFrozen(slot.boundaries[0]!.key)).toBe(true);
    expect(Object.isFrozen((positions[1] as CdcCopyPosition).key)).toBe(true);
    expect(streamStart(slot).tx).toEqual({ commitLsn: '0/0', confirmLsn: '0/100', partialLsn: '0/0' });
  });

  it('refuses another version or a malformed position with a RestoreError naming the source', () => {
    const p = streamPosition(slot, txOf('0/200', '0/230', '0/300'), 4);
    expect(() => checkPosition({ ...p, v: 4 }, 'postgres-cdc orders')).toThrow(RestoreError);
    expect(() => checkPosition({ ...p, v: 4 }, 'postgres-cdc orders')).toThrow(/postgres-cdc orders: the checkpointed position has format version 4/);
    expect(() => checkPosition({ ...p, endPending: undefined }, 'src')).toThrow(/no endPending flag/);
    // format 2 has no deferred end
    const { endPending: _, ...v2 } = { ...streamPosition(slot, txOf('0/200', '0/230', '0/300'), 4, true), v: 2 };
    expect(checkPosition(v2, 'src')).toEqual(p);
    expect(() => checkPosition({ ...p, tx: { ...p.tx, commitLsn: 'zz' } }, 'src')).toThrow(/'zz' is not an LSN/);
    expect(() => checkPosition({ ...p, phase: 'ended' }, 'src')).toThrow(/unknown phase ended/);
    expect(() => checkPosition({ v: 2, phase: 'copy', slot, rows: 1, table: 0, key: 'k' }, 'src')).toThrow(/snapshot key that is not a list/);
    expect(() => checkPosition('0/100', 'src')).toThrow(/is not an object/);
  });

  it('gives the LSN a completed checkpoint lets the slot confirm: none before the slot, its consistent point in the copy, the last whole transaction in the stream', () => {
    expect(confirmLsnOf(START_POSITION)).toBe(null);
    expect(confirmLsnOf(copyPosition(slot, 3, 0, [3]))).toBe(0x100n);
    expect(confirmLsnOf(streamPosition(slot, txOf('0/200', '0/230', '0/300'), 4))).toBe(0x230n);
    expect(resumePointOf(streamPosition(slot, txOf('0/200', '0/230', '0/300'), 4))).toEqual({
      commitLsn: 0x200n,
      confirmLsn: 0x230n,
      partialLsn: 0x300n,
      partialCount: 4,
    });
  });
});

describe('the position of format 1 (operator state postgres-cdc-position)', () => {
  const v1 = {
    v: 1,
    slot: 'weir_cdc_x',
    publication: 'weir_cdc_x',
    phase: 'stream',
    consistentLsn: '0/100',
    commitLsn: '0/200',
    confirmLsn: '0/230',
    partialLsn: '0/300',
    partialCount: 4,
    snapshotRows: 17,
    snapshotTable: 1,
    snapshotKey: ['k17'],
    boundaries: [{ table: 0, key: [9], lsn: '0/180' }],
  } as const;

  it('converts to the split position it stands for, in each phase', () => {
    const slot = { slot: 'weir_cdc_x', publication: 'weir_cdc_x', consistentLsn: '0/100', boundaries: [{ table: 0, key: [9], lsn: '0/180' }] };
    const stream = convertPositionV1(v1, 'src');
    expect(stream).toEqual({
      ended: false,
      position: { v: 3, phase: 'stream', slot, tx: { commitLsn: '0/200', confirmLsn: '0/230', partialLsn: '0/300' }, partialCount: 4, endPending: false },
    });
    expect(Object.isFrozen(stream.position)).toBe(true);
    expect(convertPositionV1({ ...v1, phase: 'snapshot' }, 'src')).toEqual({
      ended: false,
      position: { v: 3, phase: 'copy', slot, rows: 17, table: 1, key: ['k17'], endPending: false },
    });
    expect(convertPositionV1({ ...v1, phase: 'ended' }, 'src').ended).toBe(true);
    expect(checkPosition(decodeValue(encodeValue(stream.position)), 'src')).toEqual(stream.position);
  });

  it('refuses a state that is not format 1, naming the source', () => {
    expect(() => convertPositionV1({ ...v1, v: 2 }, 'postgres-cdc orders')).toThrow(RestoreError);
    expect(() => convertPositionV1({ ...v1, v: 2 }, 'postgres-cdc orders')).toThrow(/postgres-cdc orders: .*format version 2/);
    expect(() => convertPositionV1({ ...v1, commitLsn: 'zz' }, 'src')).toThrow(/'zz' is not an LSN/);
    expect(() => convertPositionV1({ ...v1, partialCount: undefined }, 'src')).toThrow(/has no counts/);
  });
});

describe('ReplayFilter', () => {
  it('skips transactions emitted whole and the emitted changes of the one the checkpoint was inside', () => {
    const f = new ReplayFilter({ commitLsn: 0x200n, partialLsn: 0x300n, partialCount: 2 });
    const kept = (lsn: bigint, changes: number): boolean[] => {
      f.begin(lsn);
      return Array.from({ length: changes }, () => f.keep());
    };
    expect(kept(0x100n, 2)).toEqual([false, false]);
    expect(f.skippingTransaction).toBe(true);
    expect(kept(0x200n, 1)).toEqual([false]);
    expect(kept(0x300n, 4)).toEqual([false, false, true, true]);
    expect(f.skippingTransaction).toBe(false);
    expect(f.skippedInTransaction).toBe(2);
    expect(kept(0x400n, 2)).toEqual([true, true]);
    expect(f.skippedInTransaction).toBe(0);
  });
});

describe('slotBehindCheck', () => {
  it("refuses a restore when the slot confirmed past the checkpoint's position", () => {
    expect(slotBehindCheck('s', 0x200n, 0x100n)).toBe(null);
    expect(slotBehindCheck('s', 0x200n, 0x200n)).toBe(null);
    expect(slotBehindCheck('s', 0x200n, 0x201n)).toMatch(/slot s confirmed 0\/201, past the checkpoint's position 0\/200/);
  });
});
