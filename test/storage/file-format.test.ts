import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../src/core/errors.ts';
import { checksumOf, decodeEnvelope, encodeEnvelope, ENVELOPE_HEADER_BYTES } from '../../src/storage/file-format.ts';
import { bytesOf, patternBytes } from './fixtures.ts';

const FILE = '/data/job/chk-1/keyed-x-0';

function catchError(fn: () => unknown): StorageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StorageError);
    return err as StorageError;
  }
  throw new Error('expected a StorageError');
}

describe('file envelope', () => {
  it('round-trips a body and records version, checksum and length in the header', () => {
    const body = patternBytes(1000);
    const bytes = encodeEnvelope('state', 1, body);
    expect(bytes.byteLength).toBe(ENVELOPE_HEADER_BYTES + 1000);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('WRST');
    const view = new DataView(bytes.buffer);
    expect(view.getUint16(4)).toBe(1);
    expect(view.getUint32(6)).toBe(crc32(body) >>> 0);
    expect(view.getBigUint64(10)).toBe(1000n);
    const decoded = decodeEnvelope('state', bytes, FILE, [1]);
    expect(decoded.version).toBe(1);
    expect(decoded.checksum).toBe(checksumOf(body));
    expect(Array.from(decoded.body)).toEqual(Array.from(body));
  });

  it('handles an empty body and input that is a view into a larger buffer', () => {
    const inner = encodeEnvelope('metadata', 1, new Uint8Array(0));
    const outer = new Uint8Array(inner.byteLength + 7);
    outer.set(inner, 3);
    const view = outer.subarray(3, 3 + inner.byteLength);
    expect(decodeEnvelope('metadata', view, FILE, [1]).body.byteLength).toBe(0);
  });

  it('uses distinct magic per kind and says which kind a wrong file is', () => {
    const meta = encodeEnvelope('metadata', 1, bytesOf('x'));
    expect(new TextDecoder().decode(meta.subarray(0, 4))).toBe('WRMD');
    const err = catchError(() => decodeEnvelope('state', meta, FILE, [1]));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toBe(`${FILE}: not a Weir state file (it is a Weir checkpoint metadata file)`);
    expect(err.file).toBe(FILE);
  });

  it('rejects a file that is not a Weir file', () => {
    const err = catchError(() => decodeEnvelope('metadata', bytesOf('{"json": "maybe"}'), FILE, [1]));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain('not a Weir checkpoint metadata file');
    expect(catchError(() => decodeEnvelope('state', new Uint8Array(0), FILE, [1])).message).toContain('truncated');
  });

  it('reports truncation with expected and found sizes', () => {
    const bytes = encodeEnvelope('state', 1, patternBytes(100));
    const err = catchError(() => decodeEnvelope('state', bytes.subarray(0, 60), FILE, [1]));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toBe(`${FILE}: truncated: expected ${ENVELOPE_HEADER_BYTES + 100} bytes, found 60`);
    const header = catchError(() => decodeEnvelope('state', bytes.subarray(0, 10), FILE, [1]));
    expect(header.message).toContain(`truncated: expected at least ${ENVELOPE_HEADER_BYTES} bytes, found 10`);
  });

  it('reports trailing bytes as a length mismatch', () => {
    const bytes = encodeEnvelope('state', 1, patternBytes(10));
    const longer = new Uint8Array(bytes.byteLength + 2);
    longer.set(bytes);
    const err = catchError(() => decodeEnvelope('state', longer, FILE, [1]));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(`expected ${ENVELOPE_HEADER_BYTES + 10} bytes, found ${ENVELOPE_HEADER_BYTES + 12}`);
  });

  it('detects any single flipped byte in the body', () => {
    const body = patternBytes(64);
    for (let i = 0; i < body.byteLength; i++) {
      const bytes = encodeEnvelope('state', 1, body);
      bytes[ENVELOPE_HEADER_BYTES + i]! ^= 0x01;
      const err = catchError(() => decodeEnvelope('state', bytes, FILE, [1]));
      expect(err.code).toBe('CORRUPT_FILE');
      expect(err.message).toContain('checksum mismatch');
      expect(err.message).toContain(FILE);
    }
  });

  it('detects a flipped byte in the header', () => {
    for (const at of [0, 7, 12]) {
      const bytes = encodeEnvelope('state', 1, patternBytes(40));
      bytes[at]! ^= 0x10;
      const err = catchError(() => decodeEnvelope('state', bytes, FILE, [1]));
      expect(err.code).toBe('CORRUPT_FILE');
    }
  });

  it('rejects a version newer than supported, naming the max', () => {
    const bytes = encodeEnvelope('metadata', 3, bytesOf('future'));
    const err = catchError(() => decodeEnvelope('metadata', bytes, FILE, [1, 2]));
    expect(err.code).toBe('UNSUPPORTED_VERSION');
    expect(err.message).toBe(`${FILE}: format version 3 is newer than this Weir supports (max 2)`);
  });

  it('rejects an unknown older version', () => {
    const bytes = encodeEnvelope('metadata', 1, bytesOf('old'));
    const err = catchError(() => decodeEnvelope('metadata', bytes, FILE, [2]));
    expect(err.code).toBe('UNSUPPORTED_VERSION');
    expect(err.message).toContain('format version 1 is not supported (supported: 2)');
  });
});
