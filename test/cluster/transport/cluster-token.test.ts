/**
 * The cluster token: from WEIR_CLUSTER_TOKEN or a file (the file wins), trimmed; a missing file
 * or a short token is a ConfigError naming the file or the variable; a generated token is long
 * enough and new each time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateClusterToken, loadClusterToken } from '../../../src/cluster/transport/cluster-token.ts';
import { ConfigError } from '../../../src/core/errors.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content, { mode: 0o600 });
  return p;
}

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no error');
}

describe('loadClusterToken', () => {
  it('is null when neither a file nor WEIR_CLUSTER_TOKEN is given', () => {
    expect(loadClusterToken({ tokenFile: null, env: {} })).toBeNull();
  });

  it('takes WEIR_CLUSTER_TOKEN, trimmed', () => {
    expect(loadClusterToken({ tokenFile: null, env: { WEIR_CLUSTER_TOKEN: '  0123456789abcdef\n' } })).toBe('0123456789abcdef');
  });

  it("takes the file's trimmed content over WEIR_CLUSTER_TOKEN", () => {
    const f = file('token', 'from-the-file-0123456789\n');
    expect(loadClusterToken({ tokenFile: f, env: { WEIR_CLUSTER_TOKEN: 'from-the-environment-0123' } })).toBe('from-the-file-0123456789');
  });

  it('names a file it cannot read', () => {
    const missing = path.join(dir, 'missing');
    const err = configError(() => loadClusterToken({ tokenFile: missing, env: { WEIR_CLUSTER_TOKEN: 'from-the-environment-0123' } }));
    expect(err.option).toBe(missing);
    expect(err.message).toContain(`${missing}: cannot read the cluster token file: ENOENT`);
  });

  it('refuses a token shorter than 16 characters, naming where it came from and never the token', () => {
    const fromEnv = configError(() => loadClusterToken({ tokenFile: null, env: { WEIR_CLUSTER_TOKEN: 'short-secret' } }));
    expect(fromEnv.option).toBe('WEIR_CLUSTER_TOKEN');
    expect(fromEnv.message).toContain('the cluster token has 12 characters, at least 16 are needed');
    expect(fromEnv.message).not.toContain('short-secret');
    const f = file('short', '  fifteen-chars-x  \n'.replace('-x', ''));
    const fromFile = configError(() => loadClusterToken({ tokenFile: f, env: {} }));
    expect(fromFile.option).toBe(f);
    expect(fromFile.message).toContain('the cluster token has 13 characters');
    expect(configError(() => loadClusterToken({ tokenFile: null, env: { WEIR_CLUSTER_TOKEN: '' } })).option).toBe('WEIR_CLUSTER_TOKEN');
  });
});

describe('generateClusterToken', () => {
  it('gives 43 base64url characters, new each time, that loadClusterToken accepts', () => {
    const a = generateClusterToken();
    const b = generateClusterToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(loadClusterToken({ tokenFile: null, env: { WEIR_CLUSTER_TOKEN: a } })).toBe(a);
  });
});
