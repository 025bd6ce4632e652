/**
 * Handshake frames alone: each message survives encoding; a protocol message, foreign bytes or a
 * field of the wrong type is a ProtocolError saying which; the two proofs differ per direction and
 * per token, so neither can be replayed as the other.
 */
import { describe, expect, it } from 'vitest';
import {
  clientProof,
  decodeHandshake,
  encodeHandshake,
  type HandshakeMessage,
  JOIN_MAGIC,
  JOIN_VERSION,
  newNonce,
  proofMatches,
  readHandshake,
  serverProof,
  versionMismatch,
} from '../../../src/cluster/transport/handshake-messages.ts';
import { encodeMessage, PROTOCOL_VERSION } from '../../../src/cluster/transport/message-codec.ts';
import { ProtocolError } from '../../../src/core/errors.ts';

const nonce = newNonce();

describe('handshake messages', () => {
  it('survive encoding, each behind the WJ prefix', () => {
    const messages: HandshakeMessage[] = [
      { type: 'challenge', magic: JOIN_MAGIC, joinVersion: JOIN_VERSION, protocolVersion: PROTOCOL_VERSION, nonce },
      {
        type: 'hello',
        joinVersion: JOIN_VERSION,
        protocolVersion: PROTOCOL_VERSION,
        role: 'data',
        weirVersion: '1.2.3',
        node: 'v20.0.0',
        body: { slots: 2, nested: { a: [1, 'x', null] }, big: 2n ** 70n },
        nonce,
        proof: clientProof('t'.repeat(16), nonce),
      },
      { type: 'welcome', proof: serverProof('t'.repeat(16), nonce), body: { id: 'tm-3' } },
      { type: 'refused', reason: 'no' },
    ];
    for (const m of messages) {
      const frame = encodeHandshake(m);
      expect([frame[0], frame[1]]).toEqual([0x57, 0x4a]);
      expect(decodeHandshake(frame, m.type)).toEqual(m);
    }
  });

  it('refuse a protocol message, foreign bytes, another type and a wrong field, saying which', () => {
    const protocol = encodeMessage({ type: 'credit', channel: 0, buffers: 1 });
    expect(() => readHandshake(protocol, ['hello'])).toThrow('a protocol message arrived before the handshake finished');
    expect(() => readHandshake(Uint8Array.of(0x47, 0x45, 0x54), ['hello'])).toThrow(
      "not a Weir handshake message: prefix 0x4745 found, 0x574a ('WJ') expected",
    );
    const refused = encodeHandshake({ type: 'refused', reason: 'x' });
    expect(() => decodeHandshake(refused, 'welcome')).toThrow('handshake: a welcome was expected, "refused" arrived');
    const shortProof = encodeHandshake({ type: 'welcome', proof: Uint8Array.of(1, 2), body: {} });
    const err = (() => {
      try {
        decodeHandshake(shortProof, 'welcome');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toBe('handshake: a welcome was expected, proof is not 32 bytes');
  });

  it('read the versions of a hello of another release before its shape', () => {
    const future = encodeHandshake({ type: 'hello', joinVersion: 7 } as unknown as HandshakeMessage);
    const m = readHandshake(future, ['hello']);
    expect(versionMismatch(m, { joinVersion: JOIN_VERSION, protocolVersion: PROTOCOL_VERSION })).toContain('the client speaks join version 7, the server 1');
  });

  it('make proofs that differ per direction and per token, and compare them whole', () => {
    const token = 'a-cluster-token-of-enough-length';
    const c = clientProof(token, nonce);
    expect(c.byteLength).toBe(32);
    expect(proofMatches(c, clientProof(token, nonce))).toBe(true);
    expect(proofMatches(c, serverProof(token, nonce))).toBe(false);
    expect(proofMatches(c, clientProof(`${token}x`, nonce))).toBe(false);
    expect(proofMatches(c, clientProof(token, newNonce()))).toBe(false);
    expect(proofMatches(c, c.subarray(0, 31))).toBe(false);
  });
});
