/**
 * The API reference: TypeDoc over src/index.ts with its validation on (typedoc.json) reports no
 * export without a doc comment and no public signature naming a type that is not exported.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from '../cli/run-cli.ts';

const exec = promisify(execFile);

describe('npm run docs', () => {
  it('documents every public export and names no unexported type (TypeDoc, warnings as errors)', async () => {
    const typedoc = path.join(REPO, 'node_modules/typedoc/bin/typedoc');
    const r = await exec(process.execPath, [typedoc, '--emit', 'none', '--treatWarningsAsErrors'], { cwd: REPO }).catch(
      (e: { stdout: string; stderr: string; code: number }) => e,
    );
    const out = `${r.stdout}${r.stderr}`.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
    expect(out.split('\n').filter((l) => l.includes('[warning]') || l.includes('[error]'))).toEqual([]);
    expect('code' in r ? r.code : 0).toBe(0);
  }, 90_000);
});
