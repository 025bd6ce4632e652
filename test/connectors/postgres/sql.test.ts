/** The PostgreSQL sink's pure parts: statements, gids, and which prepared transactions recovery rolls back. */
import { describe, expect, it } from 'vitest';
import {
  deleteStatement,
  formatGid,
  gidPrefix,
  insertStatement,
  lastActionPerKey,
  lastPerKey,
  lingeringGids,
  parseGid,
  quoteIdent,
} from '../../../src/connectors/postgres/sql.ts';

describe('PostgreSQL sink SQL', () => {
  it('quotes identifiers and builds multi-row inserts and upserts', () => {
    expect(quoteIdent('we"ird')).toBe('"we""ird"');
    const target = { schema: 's', table: 't', columns: ['k', 'v', 'w'] };
    expect(insertStatement(target, 2)).toBe('INSERT INTO "s"."t" ("k", "v", "w") VALUES ($1,$2,$3),($4,$5,$6)');
    expect(insertStatement({ ...target, upsertKey: ['k'] }, 1)).toBe(
      'INSERT INTO "s"."t" ("k", "v", "w") VALUES ($1,$2,$3) ON CONFLICT ("k") DO UPDATE SET "v" = EXCLUDED."v", "w" = EXCLUDED."w"',
    );
    expect(insertStatement({ schema: 's', table: 't', columns: ['k'], upsertKey: ['k'] }, 1)).toBe(
      'INSERT INTO "s"."t" ("k") VALUES ($1) ON CONFLICT ("k") DO NOTHING',
    );
  });

  it('keeps the last row per key in the order of the last writes', () => {
    const rows = [
      ['a', 1],
      ['b', 1],
      ['a', 2],
      ['c', 1],
      ['b', 2],
    ];
    expect(lastPerKey(rows, [0])).toEqual([
      ['a', 2],
      ['c', 1],
      ['b', 2],
    ]);
  });

  it('deletes by key, and keeps the last action per key as one upsert and one delete', () => {
    const target = { schema: 's', table: 't', columns: ['a', 'b', 'n'], upsertKey: ['a', 'b'] };
    expect(deleteStatement(target, 2)).toBe('DELETE FROM "s"."t" WHERE ("a", "b") IN (($1,$2),($3,$4))');
    const actions = [
      { row: ['x', 1, 5], remove: false },
      { row: ['y', 1, 0], remove: true },
      { row: ['x', 1, 0], remove: true },
      { row: ['y', 1, 7], remove: false },
      { row: ['z', 2, 0], remove: true },
    ];
    expect(lastActionPerKey(actions, [0, 1])).toEqual({
      upserts: [['y', 1, 7]],
      deletes: [
        ['x', 1],
        ['z', 2],
      ],
    });
  });

  it('formats and parses gids; a sink id never leaks a separator into them', () => {
    const gid = formatGid('public.t', 3, 42, 'k3x9-a1');
    expect(gid).toBe('weir:public.t:3:42:k3x9-a1');
    expect(parseGid(gid, 'public.t')).toEqual({ subtask: 3, checkpointId: 42, runId: 'k3x9-a1' });
    expect(gidPrefix('a:b')).toBe('weir:a%3ab:');
    expect(parseGid(formatGid('public.t:x', 0, 1, 'r-a0'), 'public.t')).toBe(null);
    expect(() => formatGid('x'.repeat(200), 0, 1, 'r-a0')).toThrow(/exceeds 200 bytes/);
  });

  it("rolls back only this sink's prepared transactions of other runs that no restored committable names", () => {
    const named = formatGid('s.t', 0, 5, 'old-a0');
    const unnamed = formatGid('s.t', 1, 6, 'old-a0');
    const mine = formatGid('s.t', 1, 7, 'new-a0');
    const other = formatGid('s.u', 0, 6, 'old-a0');
    expect(lingeringGids([named, unnamed, mine, other, 'foreign'], 's.t', 'new-a0', new Set([named]))).toEqual([unnamed]);
  });
});
