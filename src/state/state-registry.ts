/** The one rule both keyed backends follow for `getState`: one state object per name, of one kind. */
import { ConfigError } from '../core/errors.ts';
import type { KeyedState } from './backend.ts';
import type { StateDescriptor } from './descriptors.ts';

export type StateRegistry = Map<string, { readonly kind: StateDescriptor['kind']; readonly state: KeyedState }>;

/** Returns the state registered under the descriptor's name, creating it on first use. */
export function registeredState<S>(states: StateRegistry, descriptor: StateDescriptor, create: () => KeyedState): S {
  const existing = states.get(descriptor.name);
  if (existing !== undefined) {
    if (existing.kind !== descriptor.kind) {
      throw new ConfigError(`state "${descriptor.name}"`, `registered as ${existing.kind} state, requested as ${descriptor.kind} state`);
    }
    return existing.state as S;
  }
  if (descriptor.name === '__proto__') throw new ConfigError('state "__proto__"', 'reserved name');
  const state = create();
  states.set(descriptor.name, { kind: descriptor.kind, state });
  return state as S;
}
