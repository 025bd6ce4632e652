/**
 * The one value codec both state backends use: msgpack without records, bigints kept as bigints
 * at every size, binary decoded into its own copy (so a small restored value never pins the whole
 * snapshot stream it came from). Values are plain data; class instances lose their prototype and
 * `Map`s become objects, so map state stores its maps as arrays of pairs.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({
  useRecords: false,
  // int64-sized bigints are written as msgpack int64 and read back as bigint (the default
  // int64AsType); larger ones use msgpackr's bigint extension instead of throwing or rounding.
  useBigIntExtension: true,
  largeBigIntToFloat: false,
  copyBuffers: true,
});

export function encodeValue(value: unknown): Uint8Array {
  return packr.pack(value);
}

/** Throws whatever msgpackr throws on malformed input; callers wrap it in an error naming the file. */
export function decodeValue(bytes: Uint8Array): unknown {
  // msgpackr copies binary with the input's own species: a Buffer input would yield Buffers.
  const plain = bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return packr.unpack(plain);
}
