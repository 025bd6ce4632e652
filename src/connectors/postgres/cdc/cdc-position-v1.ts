/**
 * The CDC source's position as its first reader checkpointed it (format version 1, in the union
 * operator state `postgres-cdc-position`, before the source was a split source): read here and
 * converted to the split position (format 3, cdc-position.ts), so a job restores from a
 * checkpoint or savepoint written before. Never edit this reader; a new format gets a new file.
 */
import { RestoreError } from '../../../core/errors.ts';
import { ListStateDescriptor } from '../../../state/descriptors.ts';
import { type CdcPosition, copyPosition, slotOf, streamPosition, txOf } from './cdc-position.ts';
import { parseLsn } from './lsn.ts';

/** The state of a position as checkpointed, format version 1. */
export interface CdcStateV1 {
  readonly v: 1;
  readonly slot: string;
  readonly publication: string;
  readonly phase: 'snapshot' | 'stream' | 'ended';
  readonly consistentLsn: string;
  readonly commitLsn: string;
  readonly confirmLsn: string;
  readonly partialLsn: string;
  readonly partialCount: number;
  readonly snapshotRows: number;
  readonly snapshotTable: number;
  readonly snapshotKey: readonly unknown[] | null;
  readonly boundaries: ReadonlyArray<{ readonly table: number; readonly key: readonly unknown[] | null; readonly lsn: string }>;
}

/** Where format 1 lived: union list state, one entry (subtask 0's). */
export const POSITION_V1 = new ListStateDescriptor<CdcStateV1>('postgres-cdc-position');

/** A format-1 position as a split position, and whether the source had ended (its end condition held). */
export interface ConvertedV1 {
  readonly position: CdcPosition;
  readonly ended: boolean;
}

/** The split position a format-1 state stands for; RestoreError naming the source when the state is not format 1. */
export function convertPositionV1(state: unknown, source: string): ConvertedV1 {
  const s = state as Partial<CdcStateV1> | null;
  const bad = (why: string): RestoreError => new RestoreError(`${source}: the checkpointed position (format 1) ${why}`);
  if (s === null || typeof s !== 'object') throw bad('is not an object');
  if (s.v !== 1) throw bad(`has format version ${String(s.v)}; expected version 1`);
  if (typeof s.slot !== 'string' || typeof s.publication !== 'string') throw bad('names no slot or publication');
  if (s.phase !== 'snapshot' && s.phase !== 'stream' && s.phase !== 'ended') throw bad(`has an unknown phase ${String(s.phase)}`);
  if (!Number.isInteger(s.partialCount) || !Number.isInteger(s.snapshotRows) || !Number.isInteger(s.snapshotTable)) throw bad('has no counts');
  if (s.snapshotKey !== null && !Array.isArray(s.snapshotKey)) throw bad('has a snapshot key that is not a list');
  if (!Array.isArray(s.boundaries)) throw bad('has no snapshot boundaries');
  try {
    // parsed for the check only: formats 2 and 3 keep LSNs as text too
    for (const lsn of [s.consistentLsn, s.commitLsn, s.confirmLsn, s.partialLsn, ...s.boundaries.map((b) => b.lsn)]) parseLsn(String(lsn));
  } catch (err) {
    throw bad((err as Error).message);
  }
  const slot = slotOf(
    s.slot,
    s.publication,
    String(s.consistentLsn),
    s.boundaries.map((b) => ({ table: b.table, key: b.key, lsn: String(b.lsn) })),
  );
  if (s.phase === 'snapshot') return { position: copyPosition(slot, s.snapshotRows!, s.snapshotTable!, s.snapshotKey ?? null), ended: false };
  const tx = txOf(String(s.commitLsn), String(s.confirmLsn), String(s.partialLsn));
  return { position: streamPosition(slot, tx, s.partialCount!), ended: s.phase === 'ended' };
}
