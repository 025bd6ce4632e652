import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { commitCheckpointMetadata } from '../../../src/checkpoint/metadata/commit.ts';
import { deserializeMetadata, METADATA_FORMAT_VERSION, serializeMetadata } from '../../../src/checkpoint/metadata/serializer.ts';
import { filePathsOf } from '../../../src/checkpoint/metadata/walk.ts';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import { decodeEnvelope, encodeEnvelope, ENVELOPE_HEADER_BYTES } from '../../../src/storage/file-format.ts';
import { FsCheckpointStorage } from '../../../src/storage/fs-storage.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import { checkpointDir, jobDir, metadataPath, sharedFilePath } from '../../../src/storage/paths.ts';
import { inlineHandleFor } from '../../../src/storage/state-file.ts';
import { firstSubtask, patternBytes, sampleMetadata, tempDirs } from '../../storage/fixtures.ts';
import type { KeyGroupsStateHandle } from '../../../src/state/handles/key-groups.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const ROOT = path.resolve('/ckpt');
const JOB = jobDir(ROOT, jobId('job-a'));
const DIR = checkpointDir(JOB, checkpointId(3));
const FILE = metadataPath(DIR);
const packr = new Packr({ useRecords: false });

function fileHandle(p: string, size = 100, checksum = 0xdeadbeef): StreamStateHandle {
  return { type: 'file', path: p, size, checksum };
}

function sample() {
  return sampleMetadata({
    id: 3,
    keyed: [fileHandle(path.join(DIR, 'keyed-x-0-3')), fileHandle(sharedFilePath(JOB, 'abc'), 5, 1), inlineHandleFor(patternBytes(20))],
    operator: inlineHandleFor(patternBytes(3)),
    channel: fileHandle(path.join(DIR, 'channel-0-1-7'), 1, 0),
  });
}

async function catchError(p: Promise<unknown> | (() => unknown)): Promise<StorageError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    expect(err).toBeInstanceOf(StorageError);
    return err as StorageError;
  }
  throw new Error('expected a StorageError');
}

describe('metadata serializer', () => {
  it('round-trips every kind of handle', () => {
    const meta = sample();
    const back = deserializeMetadata(serializeMetadata(meta, DIR), FILE);
    expect(back).toEqual(meta);
    const inline = (firstSubtask(back).keyed[2] as KeyGroupsStateHandle).stream;
    expect(inline.type).toBe('inline');
    expect(inline.type === 'inline' && Object.getPrototypeOf(inline.data)).toBe(Uint8Array.prototype);
  });

  it('writes format 2 for a checkpoint with a range of a shared file, which reads back and names the range in its files', () => {
    const shared = sharedFilePath(JOB, 'changelog-shared-0');
    const range: StreamStateHandle = { type: 'range', path: shared, offset: 40, length: 12, checksum: 0xfeedbeef };
    const meta = sampleMetadata({ id: 3, keyed: [range, { ...range, offset: 0, length: 40, checksum: 7 }], operator: inlineHandleFor(patternBytes(3)) });
    const bytes = serializeMetadata(meta, DIR);
    expect(decodeEnvelope('metadata', bytes, FILE, [1, 2]).version).toBe(2);
    const wire = packr.unpack(decodeEnvelope('metadata', bytes, FILE, [2]).body) as {
      operators: Array<{ subtasks: Array<{ keyed: Array<{ stream: unknown }> }> }>;
    };
    expect(wire.operators[0]!.subtasks[0]!.keyed[0]!.stream).toEqual({
      type: 'range',
      path: '../shared/changelog-shared-0',
      offset: 40,
      length: 12,
      checksum: 0xfeedbeef,
    });
    const back = deserializeMetadata(bytes, FILE);
    expect(back).toEqual(meta);
    expect(filePathsOf(back)).toEqual([shared]);
    // A Weir that knows only format 1 refuses it by its version, never misreads it.
    expect(() => decodeEnvelope('metadata', bytes, FILE, [1])).toThrow(/format version 2 is newer than this Weir supports \(max 1\)/);
  });

  it('writes format 1 in the metadata envelope for a checkpoint without ranges of shared files', () => {
    const bytes = serializeMetadata(sample(), DIR);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('WRMD');
    expect(METADATA_FORMAT_VERSION).toBe(3);
    expect(decodeEnvelope('metadata', bytes, FILE, [1, METADATA_FORMAT_VERSION]).version).toBe(1);
  });

  it('writes format 3 for in-flight data numbered by branching chains, which reads back with its layout; without in-flight data the layout is not written', () => {
    const meta = { ...sample(), chainLayout: 'tree' as const };
    const bytes = serializeMetadata(meta, DIR);
    expect(decodeEnvelope('metadata', bytes, FILE, [1, 2, 3]).version).toBe(3);
    expect(deserializeMetadata(bytes, FILE)).toEqual(meta);
    // A Weir that knows formats 1 and 2 refuses it by its version, never misreads its gates.
    expect(() => decodeEnvelope('metadata', bytes, FILE, [1, 2])).toThrow(/format version 3 is newer than this Weir supports \(max 2\)/);
    // The same checkpoint without in-flight data: format 1, read back without a layout.
    const still = sampleMetadata({ id: 3, keyed: [fileHandle(path.join(DIR, 'keyed-x-0-3'))], operator: inlineHandleFor(patternBytes(3)), channel: null });
    const plain = serializeMetadata({ ...still, chainLayout: 'tree' }, DIR);
    expect(decodeEnvelope('metadata', plain, FILE, [1]).version).toBe(1);
    expect(deserializeMetadata(plain, FILE).chainLayout).toBeUndefined();
  });

  it('refuses a format 3 body whose layout is missing or unknown, naming the file and the key', () => {
    for (const layout of [undefined, 'line']) {
      const body = packr.pack({
        ...(packr.unpack(decodeEnvelope('metadata', serializeMetadata(sample(), DIR), FILE, [1]).body) as object),
        chainLayout: layout,
      });
      let error: unknown;
      try {
        deserializeMetadata(encodeEnvelope('metadata', 3, body), FILE);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(StorageError);
      expect(String(error)).toContain(FILE);
      expect(String(error)).toContain('chainLayout');
    }
  });

  it('stores file paths relative to the directory holding _metadata', () => {
    const { body } = decodeEnvelope('metadata', serializeMetadata(sample(), DIR), FILE, [1]);
    const wire = packr.unpack(body) as {
      operators: Array<{ subtasks: Array<{ keyed: Array<{ stream: { path?: string } }>; channels: Array<{ stream: { path: string } }> }> }>;
    };
    const st = wire.operators[0]?.subtasks[0];
    if (!st) throw new Error('the wire metadata has no subtask 0 of operator 0');
    expect(st.keyed.map((k) => k.stream.path)).toEqual(['keyed-x-0-3', '../shared/abc', undefined]);
    expect(st.channels[0]?.stream.path).toBe('channel-0-1-7');
    expect(new TextDecoder().decode(body)).not.toContain(ROOT);
  });

  it('resolves relative paths against wherever the metadata is read from', () => {
    const bytes = serializeMetadata(sample(), DIR);
    const moved = path.resolve('/backup/copy-of-3');
    const back = deserializeMetadata(bytes, path.join(moved, '_metadata'));
    expect(filePathsOf(back)).toEqual([path.join(moved, 'keyed-x-0-3'), path.resolve('/backup/shared/abc'), path.join(moved, 'channel-0-1-7')]);
  });

  it('keeps state names such as __proto__ as ordinary key counts', () => {
    const meta = sampleMetadata({ id: 1, keyed: [inlineHandleFor(patternBytes(1))] });
    const [op] = meta.operators;
    const subtask = firstSubtask(meta);
    const [keyed] = subtask.keyed;
    if (!op || !keyed) throw new Error('sampleMetadata built no keyed handle');
    const counts: Record<string, number> = {};
    Object.defineProperty(counts, '__proto__', { value: 9, enumerable: true, writable: true, configurable: true });
    const tricky = { ...meta, operators: [{ ...op, subtasks: [{ ...subtask, keyed: [{ ...keyed, keyCounts: counts }] }] }] };
    const back = deserializeMetadata(serializeMetadata(tricky, DIR), FILE);
    const [gotHandle] = firstSubtask(back).keyed;
    if (!gotHandle) throw new Error('the keyed handle did not survive the round trip');
    const got = gotHandle.keyCounts;
    expect(Object.keys(got)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });

  it('round-trips memory paths', () => {
    const dir = 'memory:job-a/chk-2';
    const meta = sampleMetadata({ id: 2, keyed: [fileHandle(`${dir}/keyed-0`), fileHandle('memory:job-a/shared/s-1')] });
    const back = deserializeMetadata(serializeMetadata(meta, dir), `${dir}/_metadata`);
    expect(filePathsOf(back)).toEqual([`${dir}/keyed-0`, 'memory:job-a/shared/s-1']);
  });

  it('a copied directory reads back with paths into the copy (real files)', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, jobId('job-a'), { inlineThresholdBytes: 16 });
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(1));
    const data = [patternBytes(500, 1), patternBytes(700, 2)];
    const handles = await Promise.all(data.map((d, i) => streams.write('exclusive', `keyed-op-${i}`, d)));
    const location = await commitCheckpointMetadata(storage, sampleMetadata({ id: 1, keyed: handles }));
    const elsewhere = path.join(await dirs.make(), 'moved', 'chk-copy');
    await mkdir(path.dirname(elsewhere), { recursive: true });
    await cp(location, elsewhere, { recursive: true });
    await rm(storage.jobDir, { recursive: true });
    const meta = deserializeMetadata(await readFile(path.join(elsewhere, '_metadata')), path.join(elsewhere, '_metadata'));
    for (const p of filePathsOf(meta)) expect(path.dirname(p)).toBe(elsewhere);
    const read = await Promise.all(firstSubtask(meta).keyed.map((k) => storage.readState((k as KeyGroupsStateHandle).stream)));
    expect(read.map((r) => Array.from(r))).toEqual(data.map((d) => Array.from(d)));
  });

  describe('rejects, naming the file,', () => {
    it('a flipped byte', async () => {
      const bytes = serializeMetadata(sample(), DIR);
      for (const at of [ENVELOPE_HEADER_BYTES, Math.floor(bytes.byteLength / 2), bytes.byteLength - 1]) {
        const copy = Uint8Array.from(bytes);
        copy[at]! ^= 0x40;
        const err = await catchError(() => deserializeMetadata(copy, FILE));
        expect(err.code).toBe('CORRUPT_FILE');
        expect(err.message).toContain(FILE);
        expect(err.message).toContain('checksum mismatch');
      }
    });

    it('truncation', async () => {
      const bytes = serializeMetadata(sample(), DIR);
      const err = await catchError(() => deserializeMetadata(bytes.subarray(0, bytes.byteLength - 5), FILE));
      expect(err.code).toBe('CORRUPT_FILE');
      expect(err.message).toBe(`${FILE}: truncated: expected ${bytes.byteLength} bytes, found ${bytes.byteLength - 5}`);
    });

    it('a future format version', async () => {
      const { body } = decodeEnvelope('metadata', serializeMetadata(sample(), DIR), FILE, [1]);
      const err = await catchError(() => deserializeMetadata(encodeEnvelope('metadata', 4, body), FILE));
      expect(err.code).toBe('UNSUPPORTED_VERSION');
      expect(err.message).toBe(`${FILE}: format version 4 is newer than this Weir supports (max 3)`);
    });

    it('a state file given as metadata', async () => {
      const err = await catchError(() => deserializeMetadata(encodeEnvelope('state', 1, patternBytes(10)), FILE));
      expect(err.code).toBe('CORRUPT_FILE');
      expect(err.message).toContain('not a Weir checkpoint metadata file');
    });

    it('a well-formed envelope around a body of the wrong shape', async () => {
      const good = packr.unpack(decodeEnvelope('metadata', serializeMetadata(sample(), DIR), FILE, [1]).body) as Record<string, unknown>;
      const cases: Array<[unknown, string]> = [
        [{ ...good, operators: 'none' }, 'operators'],
        [{ ...good, kind: 'snapshot' }, 'kind'],
        [{ ...good, checkpointId: -1 }, 'checkpointId'],
        [JSON.parse(JSON.stringify(good).replace('"keyed-x-0-3"', '"/etc/passwd"')), 'operators[0].subtasks[0].keyed[0].stream'],
        [[1, 2, 3], 'root'],
      ];
      for (const [body, at] of cases) {
        const err = await catchError(() => deserializeMetadata(encodeEnvelope('metadata', 1, packr.pack(body)), FILE));
        expect(err.code).toBe('CORRUPT_FILE');
        expect(err.message).toContain(`${FILE}: malformed metadata at ${at}`);
      }
      const undecodable = await catchError(() => deserializeMetadata(encodeEnvelope('metadata', 1, new Uint8Array([0xc1])), FILE));
      expect(undecodable.code).toBe('CORRUPT_FILE');
    });

    it('corruption of a real _metadata file on disk', async () => {
      const root = await dirs.make();
      const file = path.join(root, '_metadata');
      const bytes = serializeMetadata(sample(), DIR);
      bytes[bytes.byteLength - 3]! ^= 0xff;
      await writeFile(file, bytes);
      const err = await catchError(() => deserializeMetadata(new Uint8Array(0), file));
      expect(err.message).toContain(file);
      const err2 = await catchError(async () => deserializeMetadata(await readFile(file), file));
      expect(err2.code).toBe('CORRUPT_FILE');
    });
  });
});
