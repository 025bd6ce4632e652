/**
 * The keyed count of the job-module fixtures: for the n-th record of a key it emits `<key>:<n>`,
 * so the complete output of a run is known in advance. Imports the package by name, as job
 * modules must (the CLI runs the compiled package).
 */
import { ValueStateDescriptor, type KeyedProcessFunction, type ValueState } from 'weir-stream';

/** A factory for `keyBy(...).process(...)`; `perRecord` runs before each record (a slow consumer). */
export function countPerKey(perRecord?: () => void): () => KeyedProcessFunction<string, string, string> {
  return () => {
    let count: ValueState<number>;
    return {
      open(ctx) {
        count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
      },
      processElement(key, _ctx, out) {
        perRecord?.();
        const n = count.value()! + 1;
        count.update(n);
        out.collect(`${key}:${n}`);
      },
    };
  };
}

/** The sorted lines countPerKey emits for records 0..records-1 keyed by `keyOf`. */
export function expectedCountLines(records: number, keyOf: (i: number) => string): string[] {
  const counts = new Map<string, number>();
  const out: string[] = [];
  for (let i = 0; i < records; i++) {
    const key = keyOf(i);
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    out.push(`${key}:${n}`);
  }
  return out.sort();
}
