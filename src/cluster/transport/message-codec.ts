/**
 * The bytes of one protocol message (job master <-> task manager, task manager <-> task manager):
 * a magic byte, the protocol version, then the message as msgpack. What a link between processes
 * (TCP, next) frames, and what the in-memory links of the simulator pass every message through, so
 * a field that does not survive encoding fails a seed instead of a cluster.
 *
 * Layout: byte 0 MESSAGE_MAGIC, byte 1 PROTOCOL_VERSION, bytes 2.. msgpack(message) (msgpackr
 * without records, so every message decodes on its own; bigints kept as bigints; binary decoded
 * into its own copy, so a frame owns its ArrayBuffer at offset 0 as element-codec.ts needs).
 * Messages are plain data: `undefined` and `null` stay apart, but a Map, a class instance or an
 * Error does not survive (it arrives as an object or an array): the protocol never carries one.
 */
import { Packr } from 'msgpackr';
import { ProtocolError } from '../../core/errors.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from './protocol.ts';

/** Every message of the protocol. */
export type ProtocolMessage = ToTaskManager | ToJobMaster | DataMessage;

/** The first byte of every message: 'W'. */
export const MESSAGE_MAGIC = 0x57;
/** The protocol version this build speaks; a message of another version is refused. */
export const PROTOCOL_VERSION = 1;

const HEADER_BYTES = 2;

const packr = new Packr({ useRecords: false, useBigIntExtension: true, largeBigIntToFloat: false, copyBuffers: true });

/** The message types a decoded body may have (a body of another shape is not a message); a Record, so a new type must be listed. */
const MESSAGE_TYPES: Readonly<Record<ProtocolMessage['type'], true>> = {
  deploy: true,
  open: true,
  start: true,
  trigger: true,
  'notify-complete': true,
  'notify-aborted': true,
  cancel: true,
  heartbeat: true,
  hello: true,
  deployed: true,
  'deploy-failed': true,
  opened: true,
  'open-failed': true,
  ack: true,
  decline: true,
  'end-of-data': true,
  'task-finished': true,
  'task-failed': true,
  metrics: true,
  canceled: true,
  frame: true,
  credit: true,
};

/** The message as bytes, in a buffer of its own (transferable, never a view of a shared pool). */
export function encodeMessage(message: ProtocolMessage): Uint8Array {
  const body = packr.pack(message);
  const bytes = new Uint8Array(HEADER_BYTES + body.length);
  bytes[0] = MESSAGE_MAGIC;
  bytes[1] = PROTOCOL_VERSION;
  bytes.set(body, HEADER_BYTES);
  return bytes;
}

/**
 * The message the bytes hold; `T` is what the receiving end accepts (the link's type).
 * @throws ProtocolError (code CORRUPT_FRAME) for another magic byte, another protocol version, or a
 * body that is not a message, naming what was found and what was expected.
 */
export function decodeMessage<T extends ProtocolMessage = ProtocolMessage>(bytes: Uint8Array): T {
  const magic = bytes.length > 0 ? bytes[0]! : null;
  if (magic !== MESSAGE_MAGIC)
    throw new ProtocolError('magic', magic, MESSAGE_MAGIC, `not a Weir protocol message: magic byte ${hex(magic)} found, ${hex(MESSAGE_MAGIC)} expected`);
  const version = bytes.length > 1 ? bytes[1]! : null;
  if (version !== PROTOCOL_VERSION)
    throw new ProtocolError(
      'version',
      version,
      PROTOCOL_VERSION,
      `protocol version ${version ?? 'missing'} found, ${PROTOCOL_VERSION} expected: the peer runs another release of Weir`,
    );
  // A plain Uint8Array view, so binary fields decode as Uint8Array copies (a Buffer would give Buffers).
  const body = new Uint8Array(bytes.buffer, bytes.byteOffset + HEADER_BYTES, bytes.byteLength - HEADER_BYTES);
  let message: unknown;
  try {
    message = packr.unpack(body);
  } catch (err) {
    throw new ProtocolError(
      'body',
      null,
      null,
      `protocol message of ${bytes.byteLength} bytes does not decode: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    );
  }
  const type = typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(MESSAGE_TYPES, type))
    throw new ProtocolError('body', null, null, `protocol message of ${bytes.byteLength} bytes has no known type (found ${JSON.stringify(type) ?? 'none'})`);
  return message as T;
}

function hex(byte: number | null): string {
  return byte === null ? 'none' : `0x${byte.toString(16).padStart(2, '0')}`;
}
