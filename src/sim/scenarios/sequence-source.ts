/**
 * The simulator's record shape: per-key sequence numbers. Source `src` with S splits and K keys per
 * split emits, for index i (split i mod S, local j = floor(i / S)), key `${src}${i mod S}.${j mod K}`
 * and sequence floor(j / K) + 1. One split owns each key, so a key's records travel one FIFO path
 * and must arrive with sequence numbers rising by exactly one.
 */
export interface SeqRecord {
  readonly key: string;
  readonly seq: number;
  /** Which source emitted it (two sources may share a key space). */
  readonly origin: string;
}

export interface SeqSourceSpec {
  readonly src: string;
  /** Tag on every record; defaults to `src`. */
  readonly origin?: string;
  readonly splits: number;
  readonly keysPerSplit: number;
  readonly count: number;
}

export function seqRecord(spec: SeqSourceSpec, i: number): SeqRecord {
  const split = i % spec.splits;
  const j = Math.floor(i / spec.splits);
  return { key: `${spec.src}${split}.${j % spec.keysPerSplit}`, seq: Math.floor(j / spec.keysPerSplit) + 1, origin: spec.origin ?? spec.src };
}

/** How many records of each key the source emitted before the given split positions (next index per split). */
export function countsAtPositions(spec: SeqSourceSpec, positions: ReadonlyArray<{ split: number; next: number }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const { split, next } of positions) {
    const emitted = next > split ? Math.ceil((next - split) / spec.splits) : 0;
    for (let r = 0; r < spec.keysPerSplit; r++) {
      const n = emitted > r ? Math.floor((emitted - r - 1) / spec.keysPerSplit) + 1 : 0;
      if (n > 0) out.set(`${spec.src}${split}.${r}`, n);
    }
  }
  return out;
}

/** Every record the source emits, by key: the final sequence number per key. */
export function finalCounts(spec: SeqSourceSpec): Map<string, number> {
  return countsAtPositions(
    spec,
    Array.from({ length: spec.splits }, (_, split) => ({ split, next: spec.count })),
  );
}
