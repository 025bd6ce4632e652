/** Storage locations: one registry of URL schemes; a scheme not registered is refused in one place, naming the option and listing the registered ones. */
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, StreamEnvironment } from '../../src/index.ts';
import { jobId } from '../../src/core/ids.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import {
  absoluteLocation,
  openCheckpointStorage,
  registeredSchemes,
  registerStorageScheme,
  resolveStorageLocation,
  resolveStorageRoot,
} from '../../src/storage/location.ts';
import { MemoryCheckpointStorage } from '../../src/storage/memory-storage.ts';
import { S3CheckpointStorage } from '../../src/storage/s3/s3-storage.ts';

/** A ConfigError naming `option`, with `detail` in its message. */
function configError(option: string, detail: string | RegExp): unknown {
  return expect.objectContaining({ name: 'ConfigError', option, message: expect.stringMatching(detail) });
}

describe('storage locations', () => {
  it('keeps plain paths and memory, makes a file: URL a path', () => {
    expect(resolveStorageLocation('./checkpoints', '--checkpoint-dir')).toBe('./checkpoints');
    expect(resolveStorageLocation('/var/weir', '--checkpoint-dir')).toBe('/var/weir');
    expect(resolveStorageLocation('C:\\weir', '--checkpoint-dir')).toBe('C:\\weir');
    expect(resolveStorageLocation('memory', 'checkpointStorage')).toBe('memory');
    expect(resolveStorageLocation('memory:savepoints/x', 'restoreFrom')).toBe('memory:savepoints/x');
    const dir = path.join(os.tmpdir(), 'weir checkpoints');
    expect(resolveStorageLocation(pathToFileURL(dir).href, '--checkpoint-dir')).toBe(dir);
  });

  it('refuses any other scheme, naming the option and the scheme', () => {
    expect(() => resolveStorageLocation('gs://b/y', '--checkpoint-dir')).toThrow(
      configError('--checkpoint-dir', /^--checkpoint-dir: unsupported URL scheme 'gs:' in "gs:\/\/b\/y"/),
    );
    expect(() => resolveStorageLocation('gs://b/y', '--from')).toThrow(configError('--from', "--from: unsupported URL scheme 'gs:'"));
  });

  it('lists the registered schemes when refusing one', () => {
    expect(() => resolveStorageRoot('gs://b/y', '--checkpoint-dir')).toThrow(
      configError('--checkpoint-dir', /give a directory path or one of file:, memory:, s3:/),
    );
  });

  it('s3 storage: s3://bucket/prefix is a root and a location; a bad bucket or key names the option', () => {
    expect(resolveStorageRoot('s3://my-bucket/weir/checkpoints/', '--checkpoint-dir')).toBe('s3://my-bucket/weir/checkpoints');
    expect(resolveStorageLocation('S3://my-bucket/sp/savepoint-3-ab', '--from')).toBe('s3://my-bucket/sp/savepoint-3-ab');
    expect(() => resolveStorageRoot('s3://My_Bucket/x', '--checkpoint-dir')).toThrow(
      configError('--checkpoint-dir', /invalid s3: location "s3:\/\/My_Bucket\/x": bucket name "My_Bucket" is not valid/),
    );
    expect(() => resolveStorageLocation('s3://bucket/a//b', '--from')).toThrow(configError('--from', /key prefix "a\/\/b" has an empty/));
    expect(() => resolveStorageLocation('s3:bucket', '--from')).toThrow(configError('--from', /expected s3:\/\/<bucket>\/<prefix>/));
    const withSecret = (() => {
      try {
        resolveStorageRoot('s3://AKIAEXAMPLE:very-secret@my-bucket/x', 'checkpointStorage');
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('a URL with credentials was accepted');
    })();
    expect(withSecret.message).toContain('"s3://***@my-bucket/x": credentials do not go into a location');
    expect(withSecret.message).not.toContain('very-secret');
    const s3 = openCheckpointStorage('s3://my-bucket/weir', jobId('j'));
    expect(s3).toBeInstanceOf(S3CheckpointStorage);
    expect(s3.description).toBe('s3://my-bucket/weir/j');
  });

  it("memory storage: 'memory' and 'memory:' are its root; a path inside it is a location, never a root", () => {
    for (const given of ['memory', 'memory:', 'MEMORY:']) expect(resolveStorageRoot(given, 'checkpointStorage')).toBe('memory');
    expect(resolveStorageLocation('memory:savepoints/x', '--from')).toBe('memory:savepoints/x');
    expect(() => resolveStorageRoot('memory:x', 'checkpointStorage')).toThrow(
      configError('checkpointStorage', /invalid memory: location "memory:x": memory storage has no directories/),
    );
    expect(openCheckpointStorage('memory', jobId('j'))).toBeInstanceOf(MemoryCheckpointStorage);
  });

  it('file storage: a plain path or a file: URL is its root', () => {
    const dir = path.join(os.tmpdir(), 'weir-root');
    expect(resolveStorageRoot(pathToFileURL(dir).href, 'checkpointStorage')).toBe(dir);
    expect(resolveStorageRoot('./chk', 'checkpointStorage')).toBe('./chk');
    const fs = openCheckpointStorage(dir, jobId('j'));
    expect(fs).toBeInstanceOf(FsCheckpointStorage);
    expect((fs as FsCheckpointStorage).jobDir).toBe(path.join(dir, 'j'));
    expect(absoluteLocation('./chk')).toBe(path.resolve('chk'));
    expect(absoluteLocation('memory:sp')).toBe('memory:sp');
  });

  it('a registered scheme is all a storage needs: the option, the flags and restores accept it, and it opens the storage', async () => {
    expect(() => resolveStorageLocation('test-scheme://b/x', 'checkpointStorage')).toThrow(ConfigError);
    const files = new Map<string, Uint8Array>();
    const opened: string[] = [];
    registerStorageScheme({
      scheme: 'test-scheme',
      location: (location) => {
        if (!location.startsWith('test-scheme://')) throw new Error('needs a bucket');
        return location;
      },
      open: (root, id) => {
        opened.push(`${root} ${id}`);
        return new MemoryCheckpointStorage(id, { files });
      },
    });
    expect(resolveStorageLocation('test-scheme://b/x', '--from')).toBe('test-scheme://b/x');
    expect(resolveStorageRoot('test-scheme://b', '--checkpoint-dir')).toBe('test-scheme://b');
    expect(() => resolveStorageRoot('test-scheme:b', '--checkpoint-dir')).toThrow(
      configError('--checkpoint-dir', 'invalid test-scheme: location "test-scheme:b": needs a bucket'),
    );
    expect(registeredSchemes()).toContain('test-scheme:');
    const env = StreamEnvironment.create({
      checkpointStorage: 'test-scheme://b',
      jobId: 'registered',
      checkpointing: { retention: 'retain-on-cancel' },
      restartStrategy: { type: 'none' },
    });
    expect(env.options.checkpointStorage).toBe('test-scheme://b');
    env.fromElements(1, 2, 3).uid('one').print();
    expect((await env.execute('registered')).status).toBe('FINISHED');
    expect(opened).toEqual(['test-scheme://b registered']);
    expect([...files.keys()].some((k) => k.startsWith('memory:registered/chk-'))).toBe(true);
  });

  it('checkpointStorage in code: a file: URL becomes its path, s3: stays a URL, gs: is a ConfigError', () => {
    const dir = path.join(os.tmpdir(), 'weir-location-test');
    expect(StreamEnvironment.create({ checkpointStorage: pathToFileURL(dir).href }).options.checkpointStorage).toBe(dir);
    expect(StreamEnvironment.create({ checkpointStorage: 's3://bucket/x' }).options.checkpointStorage).toBe('s3://bucket/x');
    expect(() => StreamEnvironment.create({ checkpointStorage: 'gs://bucket/x' })).toThrow(configError('checkpointStorage', "unsupported URL scheme 'gs:'"));
  });

  it('restoreFrom in code: an unregistered scheme is a ConfigError before the job starts', async () => {
    const env = StreamEnvironment.create({ parallelism: 1 });
    env.fromElements(1).uid('one').print();
    const err = await env.execute('location', { restoreFrom: 'gs://bucket/chk-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).option).toBe('restoreFrom');
    expect((err as ConfigError).message).toContain("unsupported URL scheme 'gs:'");
  });
});
