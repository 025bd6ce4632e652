/**
 * Keys of the embedded backend's local store: `[keyGroup u16][stateId u16][msgpack(userKey)]`. Key
 * group first, so one key group's entries (of every state) are one contiguous range that a snapshot
 * reads in order, and a key group's entries of one state are a sub-range. msgpack is deterministic
 * here (integers in their smallest form, floats as float64, bigints tagged), so the same key always
 * gives the same bytes and `1`, `1n` and `'1'` stay distinct keys, as in the heap backend's maps.
 * The user-key part is exactly the key as keyed snapshot streams encode it, so snapshots copy it.
 */
import { WeirError } from '../../core/errors.ts';
import { decodeValue, encodeValue } from '../codec.ts';
import type { Key } from '../key-groups.ts';

export const STORE_KEY_PREFIX_BYTES = 4;
/** lmdb's largest key (its default build). */
export const STORE_KEY_BYTES_MAX = 1978;

/** -0 and 0 are one key in a JS Map (and in the heap backend), so they must be one key here too. */
export function normaliseKey(key: Key): Key {
  return key === 0 ? 0 : key;
}

export function encodeUserKey(key: Key): Uint8Array {
  return encodeValue(normaliseKey(key));
}

/** The store key of a user key whose msgpack bytes are `userKey`. */
export function storeKeyOf(keyGroup: number, stateId: number, userKey: Uint8Array, stateName: string): Buffer {
  const total = STORE_KEY_PREFIX_BYTES + userKey.byteLength;
  if (total > STORE_KEY_BYTES_MAX) {
    throw new WeirError(
      'INVALID_JOB',
      `state "${stateName}": a key of ${userKey.byteLength} encoded bytes is too long for the embedded state backend (at most ${STORE_KEY_BYTES_MAX - STORE_KEY_PREFIX_BYTES}); use a shorter key or the heap backend`,
    );
  }
  const out = Buffer.allocUnsafe(total);
  out.writeUInt16BE(keyGroup, 0);
  out.writeUInt16BE(stateId, 2);
  out.set(userKey, STORE_KEY_PREFIX_BYTES);
  return out;
}

/** The first store key of a key group's state (or of the whole key group with stateId 0). */
export function storeKeyPrefix(keyGroup: number, stateId: number): Buffer {
  const out = Buffer.allocUnsafe(STORE_KEY_PREFIX_BYTES);
  out.writeUInt16BE(keyGroup, 0);
  out.writeUInt16BE(stateId, 2);
  return out;
}

export function keyGroupOfStoreKey(storeKey: Uint8Array): number {
  return (storeKey[0]! << 8) | storeKey[1]!;
}

export function stateIdOfStoreKey(storeKey: Uint8Array): number {
  return (storeKey[2]! << 8) | storeKey[3]!;
}

/** The msgpack bytes of the user key inside a store key. */
function userKeyBytes(storeKey: Uint8Array): Uint8Array {
  return storeKey.subarray(STORE_KEY_PREFIX_BYTES);
}

export function decodeUserKey(storeKey: Uint8Array): Key {
  return decodeValue(userKeyBytes(storeKey)) as Key;
}
