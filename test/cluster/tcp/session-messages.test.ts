import { describe, expect, it } from 'vitest';
import { decodeSessionMessage, encodeSessionMessage, type ToJoiningTaskManager } from '../../../src/cluster/tcp/session-messages.ts';
import { encodeMessage } from '../../../src/cluster/transport/message-codec.ts';

describe('session messages (between the handshake and the attempt protocol)', () => {
  it('round-trip, code bytes included', () => {
    const assign: ToJoiningTaskManager = { type: 'assign', pool: 3, index: 1, peers: [{ index: 0, host: '10.77.0.2', port: 40123 }] };
    expect(decodeSessionMessage(encodeSessionMessage(assign), 'test')).toEqual(assign);
    const code = decodeSessionMessage<ToJoiningTaskManager>(encodeSessionMessage({ type: 'code', bytes: new Uint8Array([1, 2, 3]) }), 'test');
    expect(code).toEqual({ type: 'code', bytes: new Uint8Array([1, 2, 3]) });
  });

  it('refuse a protocol message in their place, naming the peer', () => {
    const protocol = encodeMessage({ type: 'hello' });
    expect(() => decodeSessionMessage(protocol, 'job master 10.77.0.1:6123')).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FRAME', message: expect.stringContaining('job master 10.77.0.1:6123') }),
    );
  });
});
