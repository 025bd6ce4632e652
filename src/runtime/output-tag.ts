/** Names a side output: a second stream of records, of its own type, out of an operator. */
import { JobDefinitionError } from '../core/errors.ts';

/**
 * A side output's name and type. Emit to it with `ctx.output(tag, value)` in a process or window
 * function (or `WindowedStream.sideOutputLateData(tag)`), read it with `stream.getSideOutput(tag)`.
 * Two tags with the same id name the same side output.
 */
export class OutputTag<T> {
  /** @internal carries the element type */
  declare readonly _type?: T;
  /**
   * A tag.
   * @param id the side output's name, unique among the side outputs of an operator (non-empty).
   * @throws JobDefinitionError when `id` is empty.
   */
  constructor(readonly id: string) {
    if (typeof id !== 'string' || id.length === 0) throw new JobDefinitionError(`OutputTag: id must be a non-empty string, got ${JSON.stringify(id)}`);
  }
}
