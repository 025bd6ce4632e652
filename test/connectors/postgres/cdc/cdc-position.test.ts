/** The CDC source's pure parts: LSNs, names, the checkpointed position format, replay skipping, confirmations. */
import { describe, expect, it } from 'vitest';
import { slotNameOf, parseTableName } from '../../../../src/connectors/postgres/cdc/cdc-names.ts';
import {
  ConfirmLedger,
  ReplayFilter,
  decodePosition,
  encodePosition,
  initialPosition,
  slotBehindCheck,
} from '../../../../src/connectors/postgres/cdc/cdc-position.ts';
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

describe('the checkpointed position', () => {
  it('round-trips through format version 1 and refuses other versions, naming the source', () => {
    const p = initialPosition('weir_cdc_x', 'weir_cdc_x', 0x100n, true);
    p.phase = 'stream';
    p.commitLsn = 0x200n;
    p.confirmLsn = 0x230n;
    p.partialLsn = 0x300n;
    p.partialCount = 4;
    p.snapshotRows = 17;
    const state = encodePosition(p);
    expect(state).toEqual({
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
      snapshotTable: 0,
      snapshotKey: null,
      boundaries: [],
    });
    expect(decodePosition(JSON.parse(JSON.stringify(state)), 'src')).toEqual(p);
    expect(() => decodePosition({ ...state, v: 2 }, 'postgres-cdc orders')).toThrow(RestoreError);
    expect(() => decodePosition({ ...state, v: 2 }, 'postgres-cdc orders')).toThrow(/postgres-cdc orders: .*format version 2/);
    expect(() => decodePosition({ ...state, commitLsn: 'zz' }, 'src')).toThrow(/'zz' is not an LSN/);
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

describe('ConfirmLedger', () => {
  it('confirms the completed checkpoint position and forgets older and aborted ones', () => {
    const l = new ConfirmLedger();
    l.record(1, 0x10n);
    l.record(2, 0x20n);
    l.record(3, 0x30n);
    l.abort(3);
    l.record(4, 0x40n);
    expect(l.complete(2)).toBe(0x20n);
    expect(l.size).toBe(1);
    expect(l.complete(1)).toBe(null);
    expect(l.complete(4)).toBe(0x40n);
    expect(l.size).toBe(0);
    l.record(5, 0x50n);
    l.abort(5);
    expect(l.complete(5)).toBe(null);
  });
});

describe('slotBehindCheck', () => {
  it("refuses a restore when the slot confirmed past the checkpoint's position", () => {
    const p = initialPosition('s', 's', 0x100n, false);
    p.confirmLsn = 0x200n;
    expect(slotBehindCheck(p, 0x100n)).toBe(null);
    expect(slotBehindCheck(p, 0x200n)).toBe(null);
    expect(slotBehindCheck(p, 0x201n)).toMatch(/slot s confirmed 0\/201, past the checkpoint's position 0\/200/);
  });
});
