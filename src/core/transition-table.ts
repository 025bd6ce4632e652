/**
 * A transition table: for each phase of a life cycle, the events it accepts and the phase each
 * leads to. The decision is pure and in one place; the classes that live the cycle hold a phase
 * and ask the table for the next one. An event a phase cannot receive is a programmer error.
 */
import { assert } from './assert.ts';

/** Per phase, the events it accepts and the phase each leads to; an event absent is illegal there. */
export type TransitionTable<P extends string, E extends string> = { readonly [K in P]: Readonly<Partial<Record<E, P>>> };

/** The phase `event` leads to from `phase`; asserts that the table allows it (`what` names the life cycle). */
export function nextPhase<P extends string, E extends string>(table: TransitionTable<P, E>, what: string, phase: P, event: E): P {
  const next = table[phase][event];
  assert(next !== undefined, () => `${what}: event '${event}' is illegal in phase '${phase}'`);
  return next;
}
