/**
 * Operators that run user process functions: one input or two, keyed or not. On keyed inputs the
 * record's key group arrives with the buffer; the operator only evaluates the key selector.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { Key } from '../../state/key-groups.ts';
import { keyGroup as asKeyGroup } from '../../core/ids.ts';
import type { KeyedStateBackend } from '../../state/backend.ts';
import type { Collector, ProcessContext, RichFunction } from '../functions.ts';
import { AbstractStreamOperator } from '../operator.ts';
import type { OutputTag } from '../output-tag.ts';
import { createRuntimeContext } from './runtime-context.ts';

/** The shape shared by ProcessFunction, KeyedProcessFunction and the two-input variants. */
interface AnyProcessFunction extends RichFunction {
  processElement?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  processElement1?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  processElement2?(value: unknown, ctx: ProcessContext<any>, out: Collector<unknown>): void;
  endInput?(out: Collector<unknown>): void;
}

export class ProcessOperator extends AbstractStreamOperator implements ProcessContext<any> {
  private backend: KeyedStateBackend | null = null;
  currentKey: any = undefined;
  subtaskIndex = 0;
  private endedInputs = 0;

  /**
   * @param keySelectors per input, the key selector when that input is keyed (null otherwise)
   */
  constructor(
    private readonly fn: AnyProcessFunction,
    private readonly keySelectors: ReadonlyArray<((record: any) => Key) | null>,
  ) {
    super();
  }

  override open(): void {
    this.backend = this.ctx.keyedBackend;
    this.subtaskIndex = this.ctx.subtaskIndex;
    this.fn.open?.(createRuntimeContext(this.ctx));
  }

  processElement(record: unknown, keyGroup: number, input: number): void {
    const selector = this.keySelectors[input];
    if (selector) {
      const key = selector(record);
      this.currentKey = key;
      this.backend!.setCurrentKey(key, asKeyGroup(keyGroup));
    }
    const out = this.ctx.output;
    if (input === 0) {
      if (this.fn.processElement) this.fn.processElement(record, this, out);
      else this.fn.processElement1!(record, this, out);
    } else {
      this.fn.processElement2!(record, this, out);
    }
  }

  output<X>(tag: OutputTag<X>, value: X): void {
    this.ctx.output.sideOutput(tag.id, value);
  }

  override endInput(): void {
    if (++this.endedInputs === this.keySelectors.length) this.fn.endInput?.(this.ctx.output);
  }

  override snapshotState(checkpointId: CheckpointId): void {
    this.fn.snapshotState?.(checkpointId);
  }

  override notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.fn.notifyCheckpointComplete?.(checkpointId);
  }

  override close(): void {
    this.fn.close?.();
  }
}
