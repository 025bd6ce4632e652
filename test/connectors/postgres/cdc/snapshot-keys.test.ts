/** The resumable copy's pure parts: key kinds and order, the queries that continue a copy, which replayed changes a resumed copy holds. */
import { describe, expect, it } from 'vitest';
import { type TableKey, compareKeys, copyQueries, inCopy, keyKindOf } from '../../../../src/connectors/postgres/cdc/snapshot-keys.ts';

const INT: TableKey = { columns: ['id'], kinds: ['number'] };
const PAIR: TableKey = { columns: ['region', 'n'], kinds: ['text', 'bigint'] };

describe('key order', () => {
  it('knows the kinds whose order it reproduces', () => {
    expect([21, 23, 26, 20, 25, 1043, 2950].map(keyKindOf)).toEqual(['number', 'number', 'number', 'bigint', 'text', 'text', 'text']);
    expect(keyKindOf(1700)).toBe(null); // numeric
    expect(keyKindOf(1114)).toBe(null); // timestamp
  });

  it('orders numbers numerically, int8 text as integers, text by bytes (COLLATE "C"), tuples column by column', () => {
    expect(compareKeys(INT, [9], [10])).toBeLessThan(0);
    expect(compareKeys(PAIR, ['a', '9'], ['a', '10'])).toBeLessThan(0);
    expect(compareKeys(PAIR, ['a', '9223372036854775806'], ['a', '9223372036854775807'])).toBeLessThan(0);
    expect(compareKeys(PAIR, ['B', '1'], ['a', '0'])).toBeLessThan(0); // upper case first, as in C collation
    expect(compareKeys(PAIR, ['é', '1'], ['z', '0'])).toBeGreaterThan(0); // UTF-8 bytes: é (0xC3) after z
    expect(compareKeys(PAIR, ['a', '5'], ['a', '5'])).toBe(0);
  });
});

describe('copyQueries', () => {
  const tables = [
    { schema: 's', table: 'a' },
    { schema: 's', table: 'b' },
    { schema: 's', table: 'c' },
  ];
  it('copies every table in key order from the start', () => {
    expect(copyQueries(tables, [INT, PAIR, null], 0, null).map((q) => [q.text, q.values])).toEqual([
      ['SELECT * FROM "s"."a" ORDER BY "id"', []],
      ['SELECT * FROM "s"."b" ORDER BY "region" COLLATE "C", "n"', []],
      ['SELECT * FROM "s"."c"', []],
    ]);
  });

  it('continues inside a table after its last key, then the later tables whole', () => {
    expect(copyQueries(tables, [INT, PAIR, null], 1, ['eu', '7']).map((q) => [q.table.table, q.text, q.values])).toEqual([
      ['b', 'SELECT * FROM "s"."b" WHERE ("region" COLLATE "C", "n") > ($1, $2) ORDER BY "region" COLLATE "C", "n"', ['eu', '7']],
      ['c', 'SELECT * FROM "s"."c"', []],
    ]);
  });
});

describe('inCopy', () => {
  const keys = [INT, INT];
  it('holds a replayed change of a row the resumed copy read, committed at or before its snapshot', () => {
    const boundaries = [{ table: 0, key: [100], lsn: 500n }];
    expect(inCopy(boundaries, keys, 0, [101], 500n)).toBe(true);
    expect(inCopy(boundaries, keys, 0, [101], 501n)).toBe(false); // after the resumed snapshot
    expect(inCopy(boundaries, keys, 0, [100], 400n)).toBe(false); // copied before the restore: a change
    expect(inCopy(boundaries, keys, 1, [1], 400n)).toBe(true); // a later table, read whole by the resumed copy
    expect(inCopy([], keys, 0, [101], 400n)).toBe(false);
  });

  it('the newest boundary a row lies after decides (restores inside the copy one after another)', () => {
    const boundaries = [
      { table: 0, key: [100], lsn: 500n },
      { table: 0, key: [200], lsn: 700n },
    ];
    expect(inCopy(boundaries, keys, 0, [150], 600n)).toBe(false); // read at 500: the change at 600 is news
    expect(inCopy(boundaries, keys, 0, [150], 450n)).toBe(true);
    expect(inCopy(boundaries, keys, 0, [250], 600n)).toBe(true); // read at 700
    expect(inCopy(boundaries, keys, 0, [50], 450n)).toBe(false);
  });
});
