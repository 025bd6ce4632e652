/**
 * Small jobs' parts for event-time tests: a bounded source of fixed values, and a function that
 * prints the event time it sees with each record.
 */
import { POLL_END, POLL_MORE } from '../../src/index.ts';
import type { ProcessFunction, Source } from '../../src/index.ts';

/** A bounded source of `values` in one poll. */
export function values(...vs: number[]): Source<number> {
  return {
    name: 'values',
    bounded: true,
    createReader() {
      let done = false;
      return {
        open() {},
        poll(out) {
          if (done) return POLL_END;
          for (const v of vs) out.collect(v);
          done = true;
          return POLL_MORE;
        },
        snapshotState() {},
        close() {},
      };
    },
  };
}

/** Emits `tag:value:timestamp` for each record (the event time the function sees). */
export function seen(tag: string): () => ProcessFunction<number, string> {
  return () => ({
    processElement(v, ctx, out) {
      out.collect(`${tag}:${v}:${ctx.timestamp}`);
    },
  });
}
