/** A batch of records on a channel: what flows between subtasks and what unaligned checkpoints persist. */
export interface DataBuffer {
  readonly kind: 'buffer';
  readonly records: unknown[];
  /** Key group per record on keyed edges, else null. */
  readonly keyGroups: Int32Array | null;
}
