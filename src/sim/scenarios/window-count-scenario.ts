/**
 * The simulator's count-window scenario (`window-count`): tumbling count windows
 * (`countWindow(4)`), sliding count windows (`countWindow(5, 2)`: a count evictor and a count
 * trigger) and a global window with a trigger of its own (punctuation by sequence number, firing
 * and sometimes purging, with a process function that counts its firings in per-window state),
 * all on one keyed input. One source split (its parallelism and its tag stage's fixed at 1, so a
 * rescale moves only the window operators) keeps each key's records in input order on one channel:
 * what a count window holds is a function of that order alone, so each firing is the same in
 * every run and the committed output is compared, as a multiset, with the fault-free run. Window
 * contents, count-trigger state and per-window state are keyed state through every fault, restore
 * and rescale; a key's incomplete last windows never fire (as `countWindow` documents), in every run alike.
 */
import type { DataStream } from '../../api/data-stream.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import type { Collector } from '../../runtime/functions.ts';
import { GlobalWindows, type WindowAssigner } from '../../runtime/windows/assigners.ts';
import type { Trigger, TriggerResult } from '../../runtime/windows/trigger.ts';
import type { ProcessWindowFunction } from '../../runtime/windows/window-functions.ts';
import type { GlobalWindow } from '../../runtime/windows/window.ts';
import { type Span, spanAggregate } from './window-span.ts';
import { ValueStateDescriptor } from '../../state/descriptors.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';

export const COUNT_TUMBLING = 4;
export const COUNT_SLIDING: readonly [size: number, slide: number] = [5, 2];
/** The global window fires at every sequence number divisible by this... */
export const GLOBAL_FIRE_EVERY = 3;
/** ...and fires and purges at every one divisible by this. */
export const GLOBAL_PURGE_EVERY = 10;

function spanLine(tag: string): () => ProcessWindowFunction<Span, string, string, GlobalWindow> {
  return () => ({
    process: (key, _ctx, results, out) => {
      for (const [n, first, last, sum] of results) out.collect(`${tag}|${key}|${first}|${last}|${sum}|${n}`);
    },
  });
}

/** Fires the global window at every GLOBAL_FIRE_EVERY-th sequence number, and purges it at every GLOBAL_PURGE_EVERY-th. */
export const punctuationTrigger: Trigger<SeqRecord, GlobalWindow> = {
  canMerge: false,
  onElement(r): TriggerResult {
    if (r.seq % GLOBAL_PURGE_EVERY === 0) return 'FIRE_AND_PURGE';
    return r.seq % GLOBAL_FIRE_EVERY === 0 ? 'FIRE' : 'CONTINUE';
  },
  onEventTime: () => 'CONTINUE',
  onProcessingTime: () => 'CONTINUE',
  clear() {},
};

const FIRINGS = new ValueStateDescriptor<number>('firings');

/** All elements of the global window; its firings so far are per-window state (a purge keeps them). */
function globalLines(): ProcessWindowFunction<SeqRecord, string, string, GlobalWindow> {
  return {
    process(key, ctx, elements, out: Collector<string>) {
      const firings = ctx.windowState().getState(FIRINGS);
      const nth = (firings.value() ?? 0) + 1;
      firings.update(nth);
      let sum = 0;
      for (const r of elements) sum += r.seq;
      out.collect(`G|${key}|${nth}|${elements[0]?.seq}|${elements[elements.length - 1]?.seq}|${sum}|${elements.length}`);
    },
  };
}

/** The input: one split, parallelism 1, records as fast as the rate allows. */
export function countSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number): DataStream<SeqRecord> {
  return env
    .generate({ count: spec.count, ratePerSec }, (i) => seqRecord(spec, i))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`)
    .setParallelism(1);
}

/**
 * The three count-window stages over `input`, their lines in one stream: `C|key|first|last|sum|n`
 * (tumbling), `S|...` (sliding), `G|key|firing|first|last|sum|n` (global window).
 */
export function countWindowStages(input: DataStream<SeqRecord>, uid: string): DataStream<string> {
  const keyed = input.keyBy((r) => r.key);
  const tumbling = keyed.countWindow(COUNT_TUMBLING).aggregate(spanAggregate, spanLine('C')).uid(uid).name('count-tumbling');
  const sliding = keyed.countWindow(COUNT_SLIDING[0], COUNT_SLIDING[1]).aggregate(spanAggregate, spanLine('S')).uid(`${uid}-sliding`).name('count-sliding');
  const global = keyed
    .window(GlobalWindows.create() as WindowAssigner<SeqRecord, GlobalWindow>)
    .trigger(punctuationTrigger)
    .process(globalLines)
    .uid(`${uid}-global`)
    .name('global-punctuated');
  return tumbling.union(sliding, global);
}
