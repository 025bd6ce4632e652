/** What a simulator window line says about a window's records: count, first and last sequence number, and their sum. */
import type { AggregateFunction } from '../../state/descriptors.ts';
import type { SeqRecord } from './sequence-source.ts';

export type Span = [n: number, first: number, last: number, sum: number];

/** Aggregates a window's records into their `Span` (mergeable, for session windows). */
export const spanAggregate: AggregateFunction<SeqRecord, Span, Span> = {
  createAccumulator: () => [0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0],
  add: (r, [n, first, last, sum]) => [n + 1, Math.min(first, r.seq), Math.max(last, r.seq), sum + r.seq],
  getResult: (acc) => acc,
  merge: ([n1, f1, l1, s1], [n2, f2, l2, s2]) => [n1 + n2, Math.min(f1, f2), Math.max(l1, l2), s1 + s2],
};
