/**
 * The heap operator backend's snapshot stream (format version 1): after the header, one msgpack
 * value `[[name, mode, [entry, ...]], ...]` holding every list state of one subtask.
 */
import { StorageError } from '../../core/errors.ts';
import type { OperatorStateHandle, OperatorStateMode } from '../../storage/handles.ts';
import type { StateReader } from '../backend.ts';
import { decodeValue, encodeValue } from '../codec.ts';
import { assembleStream, OPERATOR_STREAM_VERSION, readStreamHeader, STREAM_HEADER_BYTES, streamName } from './stream-format.ts';

export interface OperatorListSnapshot {
  readonly name: string;
  readonly mode: OperatorStateMode;
  readonly entries: readonly unknown[];
}

export function encodeOperatorStream(lists: readonly OperatorListSnapshot[]): Uint8Array {
  const body = encodeValue(lists.map((l) => [l.name, l.mode, l.entries]));
  return assembleStream('operator', OPERATOR_STREAM_VERSION, [body]).bytes;
}

/** Reads and checks one operator handle's stream against the handle's own description. */
export async function readOperatorHandle(handle: OperatorStateHandle, read: StateReader): Promise<OperatorListSnapshot[]> {
  const label = streamName(handle.stream);
  const bytes = await read(handle.stream);
  readStreamHeader(bytes, 'operator', [OPERATOR_STREAM_VERSION], label);
  let decoded: unknown;
  try {
    decoded = decodeValue(bytes.subarray(STREAM_HEADER_BYTES));
  } catch (err) {
    throw new StorageError('CORRUPT_FILE', label, 'undecodable operator state', { cause: err });
  }
  const corrupt = (what: string): StorageError => new StorageError('CORRUPT_FILE', label, what);
  if (!Array.isArray(decoded) || decoded.length !== handle.states.length) throw corrupt('operator state does not match its handle');
  return decoded.map((item: unknown, i): OperatorListSnapshot => {
    const expected = handle.states[i]!;
    if (!Array.isArray(item) || item[0] !== expected.name || item[1] !== expected.mode || !Array.isArray(item[2]) || item[2].length !== expected.count) {
      throw corrupt(`operator state "${expected.name}" does not match its handle`);
    }
    return { name: expected.name, mode: expected.mode, entries: item[2] };
  });
}
