/**
 * The event time of the element a subtask's chain is processing: one mutable register per
 * subtask, so records carry their timestamps through a chain without an allocation each.
 */
import { NO_TIMESTAMP } from '../../core/watermark.ts';

/** The register: the task sets `current` before calling the head; `Output.collect` reads it. */
export interface ElementTimestamp {
  /** Event time in milliseconds of the element in flight, or NO_TIMESTAMP (-Infinity). */
  current: number;
}

export function newElementTimestamp(): ElementTimestamp {
  return { current: NO_TIMESTAMP };
}
