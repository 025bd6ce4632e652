/**
 * The messages of the connection handshake (handshake.ts) and the proofs they carry. Each is one
 * frame: the prefix 0x57 0x4A ('WJ'), then msgpack. A protocol message starts 0x57 then the
 * protocol version (a small number), so neither is ever taken for the other. Every version of
 * the handshake keeps `type`, `joinVersion` and `protocolVersion` readable as they are here, so a
 * peer of another release is refused with a reason naming both versions instead of a parse error.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Packr } from 'msgpackr';
import { errorMessage, ProtocolError } from '../../core/errors.ts';

/** What a challenge says first: this is a Weir cluster member asking who you are. */
export const JOIN_MAGIC = 'WEIR-JOIN';
/** The version of the handshake this build speaks. */
export const JOIN_VERSION = 1;
/** The first two bytes of every handshake frame ('WJ'). */
export const HANDSHAKE_PREFIX = 0x574a;
/** Random bytes in each side's nonce. */
export const NONCE_BYTES = 32;
/** The largest handshake frame: the peer is not authenticated yet, so it may not make us buffer much. */
export const HANDSHAKE_MAX_FRAME_BYTES = 1024 * 1024;

/** What a connection is for: job master <-> task manager messages, or task manager <-> task manager data. */
export type PeerRole = 'control' | 'data';

/** Server -> client, at once: who the server is and the nonce the client must prove the token with. */
export interface Challenge {
  readonly type: 'challenge';
  readonly magic: string;
  readonly joinVersion: number;
  readonly protocolVersion: number;
  readonly nonce: Uint8Array;
}

/** Client -> server: who the client is, its registration fields (`body`) and its proof of the token. */
export interface Hello {
  readonly type: 'hello';
  readonly joinVersion: number;
  readonly protocolVersion: number;
  readonly role: PeerRole;
  readonly weirVersion: string;
  /** process.version of the client. */
  readonly node: string;
  readonly body: Record<string, unknown>;
  readonly nonce: Uint8Array;
  /** HMAC-SHA256(token, 'weir-client' ‖ the challenge's nonce). */
  readonly proof: Uint8Array;
}

/** Server -> client: admitted, with the server's proof of the token and its answer (`body`). */
export interface Welcome {
  readonly type: 'welcome';
  /** HMAC-SHA256(token, 'weir-server' ‖ the hello's nonce). */
  readonly proof: Uint8Array;
  readonly body: Record<string, unknown>;
}

/** Server -> client: not admitted, and why; the server closes the connection after it. */
export interface Refused {
  readonly type: 'refused';
  readonly reason: string;
}

export type HandshakeMessage = Challenge | Hello | Welcome | Refused;

/** What a listener learns of an admitted client: its hello without the nonce and proof. */
export type PeerHello = Omit<Hello, 'type' | 'nonce' | 'proof'>;

const packr = new Packr({ useRecords: false, useBigIntExtension: true, largeBigIntToFloat: false, copyBuffers: true });

/** The message as a handshake frame. */
export function encodeHandshake(message: HandshakeMessage): Uint8Array {
  const body = packr.pack(message);
  const bytes = new Uint8Array(2 + body.length);
  bytes[0] = HANDSHAKE_PREFIX >> 8;
  bytes[1] = HANDSHAKE_PREFIX & 0xff;
  bytes.set(body, 2);
  return bytes;
}

/**
 * The message a handshake frame holds, checked against what `expected` looks like.
 * @throws ProtocolError for another prefix, bytes that do not decode, another message type, or a
 * field missing or of the wrong type.
 */
export function decodeHandshake<T extends HandshakeMessage['type']>(frame: Uint8Array, expected: T): Extract<HandshakeMessage, { type: T }> {
  return checkHandshake(readHandshake(frame, [expected]), expected);
}

/**
 * The fields of a handshake frame of one of the `expected` types, unchecked: a challenge or hello
 * of another version is read this far, so its versions can be named (versionMismatch) before its
 * shape fails.
 * @throws ProtocolError for another prefix, bytes that do not decode, or another message type.
 */
export function readHandshake(
  frame: Uint8Array,
  expected: ReadonlyArray<HandshakeMessage['type']>,
): Record<string, unknown> & { type: HandshakeMessage['type'] } {
  const prefix = frame.byteLength >= 2 ? (frame[0]! << 8) | frame[1]! : null;
  if (prefix !== HANDSHAKE_PREFIX) {
    const what = frame[0] === 0x57 ? 'a protocol message arrived before the handshake finished' : 'not a Weir handshake message';
    throw new ProtocolError('magic', prefix, HANDSHAKE_PREFIX, `${what}: prefix ${hex(prefix)} found, 0x574a ('WJ') expected`);
  }
  let raw: unknown;
  try {
    raw = packr.unpack(new Uint8Array(frame.buffer, frame.byteOffset + 2, frame.byteLength - 2));
  } catch (err) {
    throw new ProtocolError('body', null, null, `handshake message of ${frame.byteLength} bytes does not decode: ${errorMessage(err)}`, { cause: err });
  }
  const m = isRecord(raw) ? raw : {};
  if (!expected.includes(m.type as HandshakeMessage['type']))
    throw malformed(expected.join(' or '), `${JSON.stringify(m.type) ?? 'a message without a type'} arrived`);
  return m as Record<string, unknown> & { type: HandshakeMessage['type'] };
}

/**
 * `m` as the message it says it is.
 * @throws ProtocolError naming the first field missing or of the wrong type.
 */
export function checkHandshake<T extends HandshakeMessage['type']>(m: Record<string, unknown>, expected: T): Extract<HandshakeMessage, { type: T }> {
  const problem = m.type === expected ? SHAPES[expected](m) : `${JSON.stringify(m.type)} arrived`;
  if (problem !== null) throw malformed(expected, problem);
  return m as unknown as Extract<HandshakeMessage, { type: T }>;
}

/** Fields of each message: a problem with the first wrong one, or null. */
const SHAPES: Record<HandshakeMessage['type'], (m: Record<string, unknown>) => string | null> = {
  challenge: (m) => field(m, 'magic', 'string') ?? field(m, 'joinVersion', 'number') ?? field(m, 'protocolVersion', 'number') ?? bytes32(m, 'nonce'),
  hello: (m) =>
    field(m, 'joinVersion', 'number') ??
    field(m, 'protocolVersion', 'number') ??
    (m.role === 'control' || m.role === 'data' ? null : `role ${JSON.stringify(m.role)} is neither 'control' nor 'data'`) ??
    field(m, 'weirVersion', 'string') ??
    field(m, 'node', 'string') ??
    record(m, 'body') ??
    bytes32(m, 'nonce') ??
    bytes32(m, 'proof'),
  welcome: (m) => bytes32(m, 'proof') ?? record(m, 'body'),
  refused: (m) => field(m, 'reason', 'string'),
};

/** The versions a challenge or hello carries (unknown: read from a peer of any release). */
type Versions = Readonly<Record<string, unknown>> & { readonly joinVersion?: unknown; readonly protocolVersion?: unknown };

/**
 * Why a peer of these versions cannot talk to this build (both versions named, the client's
 * first), or null when they match.
 */
export function versionMismatch(client: Versions, server: Versions): string | null {
  if (client.joinVersion !== server.joinVersion)
    return `handshake version mismatch: the client speaks join version ${String(client.joinVersion)}, the server ${String(server.joinVersion)}: run the same release of Weir on both`;
  if (client.protocolVersion !== server.protocolVersion)
    return `protocol version mismatch: the client speaks protocol version ${String(client.protocolVersion)}, the server ${String(server.protocolVersion)}: run the same release of Weir on both`;
  return null;
}

/** A fresh random nonce. */
export function newNonce(): Uint8Array {
  return new Uint8Array(randomBytes(NONCE_BYTES));
}

/** What the client sends to prove it knows the token: HMAC-SHA256(token, 'weir-client' ‖ server nonce). */
export function clientProof(token: string, serverNonce: Uint8Array): Uint8Array {
  return proof(token, 'weir-client', serverNonce);
}

/** What the server sends to prove it knows the token: HMAC-SHA256(token, 'weir-server' ‖ client nonce). */
export function serverProof(token: string, clientNonce: Uint8Array): Uint8Array {
  return proof(token, 'weir-server', clientNonce);
}

/** Whether `got` is `expected`, in time that does not depend on where they differ. */
export function proofMatches(expected: Uint8Array, got: Uint8Array): boolean {
  return got.byteLength === expected.byteLength && timingSafeEqual(expected, got);
}

function proof(token: string, label: string, nonce: Uint8Array): Uint8Array {
  // The labels differ per direction, so a proof cannot be reflected back at its sender.
  return new Uint8Array(createHmac('sha256', token).update(label).update(nonce).digest());
}

function field(m: Record<string, unknown>, name: string, type: 'string' | 'number'): string | null {
  return typeof m[name] === type ? null : `${name} is not a ${type}`;
}

/** A nonce or a proof (HMAC-SHA256): 32 bytes. */
function bytes32(m: Record<string, unknown>, name: string): string | null {
  const v = m[name];
  return v instanceof Uint8Array && v.byteLength === NONCE_BYTES ? null : `${name} is not ${NONCE_BYTES} bytes`;
}

function record(m: Record<string, unknown>, name: string): string | null {
  return isRecord(m[name]) ? null : `${name} is not an object`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function malformed(expected: string, problem: string): ProtocolError {
  return new ProtocolError('body', null, null, `handshake: a ${expected} was expected, ${problem}`);
}

function hex(value: number | null): string {
  return value === null ? 'none' : `0x${value.toString(16).padStart(4, '0')}`;
}
