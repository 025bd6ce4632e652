/**
 * The changelog format: a segment is a run of batches, each a self-checking unit, so a reader
 * names the first torn or corrupt batch of a segment instead of replaying garbage.
 *
 * Batch, format version 1 (all integers little-endian):
 *   0  3 bytes  magic "WCL"
 *   3  u8       format version (1)
 *   4  u32      body length
 *   8  u32      crc32 of the body
 *  12  body:
 *        f64  sequence number of the first change
 *        u32  number of changes
 *        u16  number of state names, then per name: u8 kind, u16 byte length, utf-8 bytes
 *        the changes, each: u8 op, u16 name index, u16 key group, then length-prefixed (u32)
 *        msgpack of the key, of the value (set, append, mapPut) and of the map key (mapPut, mapRemove)
 *
 * Ops are what the backends report (`StateChangeListener`): a merge into reducing or aggregating
 * state is logged as a `set` of its result, so replay needs no user function.
 */
import { crc32 } from 'node:zlib';
import { StorageError } from '../../core/errors.ts';
import { decodeValue } from '../codec.ts';
import type { StateKind } from '../descriptors.ts';
import type { Key } from '../key-groups.ts';

export const CHANGELOG_FORMAT_VERSION = 1;
export const BATCH_HEADER_BYTES = 12;
const MAGIC = [0x57, 0x43, 0x4c] as const; // "WCL"

/** What a change does to the value of (state, key). */
export type ChangeOp = 'set' | 'clear' | 'append' | 'mapPut' | 'mapRemove';
export const OP_CODES: Readonly<Record<ChangeOp, number>> = { set: 1, clear: 2, append: 3, mapPut: 4, mapRemove: 5 };
const OPS_BY_CODE: readonly (ChangeOp | undefined)[] = [undefined, 'set', 'clear', 'append', 'mapPut', 'mapRemove'];
export const KIND_CODES: Readonly<Record<StateKind, number>> = { value: 1, list: 2, map: 3, reducing: 4, aggregating: 5 };
const KINDS_BY_CODE: readonly (StateKind | undefined)[] = [undefined, 'value', 'list', 'map', 'reducing', 'aggregating'];

/** Which ops carry a value and which a map key. */
export const HAS_VALUE: Readonly<Record<ChangeOp, boolean>> = { set: true, clear: false, append: true, mapPut: true, mapRemove: false };
export const HAS_MAP_KEY: Readonly<Record<ChangeOp, boolean>> = { set: false, clear: false, append: false, mapPut: true, mapRemove: true };

/**
 * One change as read from the log, its value still encoded: replay decodes only the values that
 * count (a `set` followed by another `set` of the same key never is), which is most of a log's
 * decoding on update-heavy state.
 */
export interface LoggedChange {
  readonly seq: number;
  readonly op: ChangeOp;
  readonly state: string;
  readonly kind: StateKind;
  readonly keyGroup: number;
  readonly key: Key;
  readonly mapKey: string | number | undefined;
  /** The checked batch body that holds the value's msgpack, its offset there, and its length (-1: the op carries no value). */
  readonly body: Uint8Array;
  readonly valueAt: number;
  readonly valueLength: number;
}

/** The value of a logged change, decoded (undefined for ops without one). */
export function changeValue(c: LoggedChange): unknown {
  return c.valueLength < 0 ? undefined : decodeValue(c.body.subarray(c.valueAt, c.valueAt + c.valueLength));
}

/** A state name as the batch's name table holds it. */
export interface LoggedState {
  readonly name: string;
  readonly kind: StateKind;
}

/** Writes the 12-byte batch header for `body` into `out` at 0. */
export function writeBatchHeader(out: Uint8Array, body: Uint8Array): void {
  out.set(MAGIC, 0);
  out[3] = CHANGELOG_FORMAT_VERSION;
  const view = new DataView(out.buffer, out.byteOffset, BATCH_HEADER_BYTES);
  view.setUint32(4, body.byteLength, true);
  view.setUint32(8, crc32(body) >>> 0, true);
}

/** Reads one segment (batches back to back), checking every batch, its values left encoded; `label` names it in errors. Throws StorageError CORRUPT_FILE at the first bad batch. */
export function readSegment(bytes: Uint8Array, label: string): LoggedChange[] {
  const out: LoggedChange[] = [];
  let at = 0;
  let batch = 0;
  let nextSeq: number | null = null;
  while (at < bytes.byteLength) {
    const where = `changelog batch ${batch} at byte ${at}`;
    if (bytes.byteLength - at < BATCH_HEADER_BYTES)
      throw corrupt(label, `${where}: torn (${bytes.byteLength - at} bytes, a header needs ${BATCH_HEADER_BYTES})`);
    if (bytes[at] !== MAGIC[0] || bytes[at + 1] !== MAGIC[1] || bytes[at + 2] !== MAGIC[2]) throw corrupt(label, `${where}: not a changelog batch (bad magic)`);
    if (bytes[at + 3] !== CHANGELOG_FORMAT_VERSION) {
      throw new StorageError('UNSUPPORTED_VERSION', label, `${where}: changelog format version ${bytes[at + 3]}, this Weir reads ${CHANGELOG_FORMAT_VERSION}`);
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, BATCH_HEADER_BYTES);
    const length = view.getUint32(4, true);
    const checksum = view.getUint32(8, true);
    const start = at + BATCH_HEADER_BYTES;
    if (start + length > bytes.byteLength) throw corrupt(label, `${where}: torn (body of ${length} bytes, ${bytes.byteLength - start} present)`);
    const body = bytes.subarray(start, start + length);
    if (crc32(body) >>> 0 !== checksum) throw corrupt(label, `${where}: checksum mismatch`);
    const firstSeq = decodeBody(body, out, `${label}, ${where}`);
    if (nextSeq !== null && firstSeq !== nextSeq) throw corrupt(label, `${where}: starts at change ${firstSeq}, expected ${nextSeq}`);
    nextSeq = out.length === 0 ? firstSeq : out[out.length - 1]!.seq + 1;
    at = start + length;
    batch++;
  }
  return out;
}

function corrupt(label: string, message: string): StorageError {
  return new StorageError('CORRUPT_FILE', label, message);
}

/**
 * The msgpack item at `body[at, at + length)`: unsigned integers up to 32 bits (most keys) read in
 * place, anything else by the codec (a subarray and a decoder call per key were a tenth of a
 * 1 M-change replay). Gives what `decodeValue` gives for the same bytes.
 */
export function decodeItem(body: Uint8Array, at: number, length: number): unknown {
  const b = body[at]!;
  if (length === 1 && b < 0x80) return b; // positive fixint
  if (length === 2 && b === 0xcc) return body[at + 1]!; // uint 8
  if (length === 3 && b === 0xcd) return (body[at + 1]! << 8) | body[at + 2]!; // uint 16
  if (length === 5 && b === 0xce) return body[at + 1]! * 0x1000000 + ((body[at + 2]! << 16) | (body[at + 3]! << 8) | body[at + 4]!); // uint 32
  return decodeValue(body.subarray(at, at + length));
}

/** Reads a checked body into `out` (keys and map keys decoded, values located); returns its first sequence number. */
function decodeBody(body: Uint8Array, out: LoggedChange[], where: string): number {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const text = new TextDecoder();
  let at = 0;
  const need = (n: number): void => {
    if (at + n > body.byteLength) throw new StorageError('CORRUPT_FILE', where, `body ends inside a change (needs ${n} bytes at ${at})`);
  };
  need(14);
  const firstSeq = view.getFloat64(0, true);
  const count = view.getUint32(8, true);
  const nameCount = view.getUint16(12, true);
  at = 14;
  const states: LoggedState[] = [];
  for (let i = 0; i < nameCount; i++) {
    need(3);
    const kind = KINDS_BY_CODE[body[at]!];
    const length = view.getUint16(at + 1, true);
    at += 3;
    need(length);
    if (kind === undefined) throw new StorageError('CORRUPT_FILE', where, `state ${i} has unknown kind code ${body[at - 3]}`);
    states.push({ name: text.decode(body.subarray(at, at + length)), kind });
    at += length;
  }
  /** Skips one length-prefixed msgpack item; returns its length (its bytes end at `at`). */
  const skip = (): number => {
    need(4);
    const length = view.getUint32(at, true);
    at += 4;
    need(length);
    at += length;
    return length;
  };
  const value = (): unknown => {
    const length = skip();
    return decodeItem(body, at - length, length);
  };
  for (let i = 0; i < count; i++) {
    need(5);
    const op = OPS_BY_CODE[body[at]!];
    const state = states[view.getUint16(at + 1, true)];
    const keyGroup = view.getUint16(at + 3, true);
    if (op === undefined || state === undefined) throw new StorageError('CORRUPT_FILE', where, `change ${i}: unknown op ${body[at]} or state index`);
    at += 5;
    const key = value() as Key;
    const valueLength = HAS_VALUE[op] ? skip() : -1;
    const valueAt = at - Math.max(valueLength, 0);
    const mapKey = HAS_MAP_KEY[op] ? (value() as string | number) : undefined;
    out.push({ seq: firstSeq + i, op, state: state.name, kind: state.kind, keyGroup, key, body, valueAt, valueLength, mapKey });
  }
  if (at !== body.byteLength) throw new StorageError('CORRUPT_FILE', where, `${body.byteLength - at} bytes after the last change`);
  return firstSeq;
}
