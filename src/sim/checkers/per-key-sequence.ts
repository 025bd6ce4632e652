/** Checker (b): the keyed operator saw each key's sequence rise by exactly one (at-least-once: never skip). */
import type { SequenceLog } from '../scenarios/scenarios.ts';

export function checkSequences(log: SequenceLog): string[] {
  return log.violations.map((v) => `sequence: ${v}`);
}
