/** Storage locations: a URL scheme Weir does not support is refused in one place, naming the option and the scheme. */
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, StreamEnvironment } from '../../src/index.ts';
import { registerStorageScheme, resolveStorageLocation } from '../../src/storage/location.ts';

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
    expect(() => resolveStorageLocation('s3://bucket/x', '--checkpoint-dir')).toThrow(
      configError('--checkpoint-dir', /^--checkpoint-dir: unsupported URL scheme 's3:' in "s3:\/\/bucket\/x"/),
    );
    expect(() => resolveStorageLocation('gs://b/y', '--from')).toThrow(configError('--from', "--from: unsupported URL scheme 'gs:'"));
  });

  it('accepts a scheme once a storage registers it', () => {
    expect(() => resolveStorageLocation('test-scheme://b/x', 'checkpointStorage')).toThrow(ConfigError);
    registerStorageScheme('test-scheme', (location) => `resolved ${location}`);
    expect(resolveStorageLocation('test-scheme://b/x', 'checkpointStorage')).toBe('resolved test-scheme://b/x');
  });

  it('checkpointStorage in code: a file: URL becomes its path, s3: is a ConfigError', () => {
    const dir = path.join(os.tmpdir(), 'weir-location-test');
    expect(StreamEnvironment.create({ checkpointStorage: pathToFileURL(dir).href }).options.checkpointStorage).toBe(dir);
    expect(() => StreamEnvironment.create({ checkpointStorage: 's3://bucket/x' })).toThrow(configError('checkpointStorage', "unsupported URL scheme 's3:'"));
  });

  it('restoreFrom in code: s3: is a ConfigError before the job starts', async () => {
    const env = StreamEnvironment.create({ parallelism: 1 });
    env.fromElements(1).uid('one').print();
    const err = await env.execute('location', { restoreFrom: 's3://bucket/chk-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).option).toBe('restoreFrom');
    expect((err as ConfigError).message).toContain("unsupported URL scheme 's3:'");
  });
});
