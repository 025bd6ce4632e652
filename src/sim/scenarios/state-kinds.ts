/**
 * The keyed function of the `state-kinds` scenario: besides the checked `last` sequence it keeps a
 * list that is cleared every third record (deleted keys), a map whose entries are put and removed,
 * a value cleared every other record, and a value written once and never touched again (state
 * that incremental checkpoints must carry forward unchanged). Its output under exactly-once shows
 * all of them, so a restore that loses or mixes any of them changes the output.
 *
 * Deletions that outlive a checkpoint: a map of six slots (`gaps`) where each record puts or, every
 * fourth, removes the slot of its sequence number (a removed slot stays absent for six records),
 * and a value (`held`) set every fifth record and cleared two records later (absent for three).
 * Every output line shows both whole, so a restore that brings back a deleted entry, or a value
 * from before or after the checkpoint (a snapshot whose async part saw later writes: the simulator
 * starts async parts late, see delayed-snapshots.ts), shows in the first line after it.
 */
import type { KeyedProcessFunction } from '../../runtime/functions.ts';
import { ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor } from '../../state/descriptors.ts';
import type { ListState, MapState, ValueState } from '../../state/state.ts';
import type { SequenceLog, SequenceMode } from './scenarios.ts';
import type { SeqRecord } from './sequence-source.ts';

const GAP_SLOTS = 6;

export function stateKindsFunction(log: SequenceLog, mode: SequenceMode): KeyedProcessFunction<string, SeqRecord, string> {
  let last!: ValueState<number>;
  let first!: ValueState<number>;
  let parity!: ValueState<number>;
  let window!: ListState<number>;
  let marks!: MapState<number, number>;
  let gaps!: MapState<number, number>;
  let held!: ValueState<number>;
  return {
    open(ctx) {
      last = ctx.getState(new ValueStateDescriptor<number>('last'));
      first = ctx.getState(new ValueStateDescriptor<number>('first'));
      parity = ctx.getState(new ValueStateDescriptor<number>('parity'));
      window = ctx.getListState(new ListStateDescriptor<number>('window'));
      marks = ctx.getMapState(new MapStateDescriptor<number, number>('marks'));
      gaps = ctx.getMapState(new MapStateDescriptor<number, number>('gaps'));
      held = ctx.getState(new ValueStateDescriptor<number>('held'));
    },
    processElement(r, ctx, out) {
      const previous = last.value() ?? 0;
      log.check(mode, `key ${ctx.currentKey}`, previous, r.seq);
      last.update(Math.max(previous, r.seq));
      if (first.value() === undefined) first.update(r.seq);
      if (window.get().length >= 3) window.clear();
      window.add(r.seq);
      marks.put(r.seq % 5, r.seq);
      if (r.seq % 7 === 0) marks.remove((r.seq + 1) % 5);
      if (r.seq % 2 === 0) parity.clear();
      else parity.update(r.seq);
      if (r.seq % 4 === 0) gaps.remove(r.seq % GAP_SLOTS);
      else gaps.put(r.seq % GAP_SLOTS, r.seq);
      if (r.seq % 5 === 1) held.update(r.seq);
      else if (r.seq % 5 === 3) held.clear();
      if (mode !== 'exact') {
        // At-least-once replays records into state that already saw them: only the record itself is stable.
        out.collect(`${r.key}:${r.seq}`);
        return;
      }
      const sum = window.get().reduce((a, b) => a + b, 0);
      const markSum = [...marks.values()].reduce((a, b) => a + b, 0);
      const gapLine = [...gaps.entries()]
        .sort(([a], [b]) => a - b)
        .map(([slot, seq]) => `${slot}=${seq}`)
        .join(',');
      out.collect(`${r.key}:${r.seq}:w${sum}:m${markSum}:f${first.value()}:p${parity.value() ?? '-'}:g${gapLine}:h${held.value() ?? '-'}`);
    },
  };
}
