/**
 * Probes of the directories every host must share: the job master plants them, a task manager that
 * reads another token or none refuses, naming the directory; removal cleans up.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterError } from '../../../src/core/errors.ts';
import { checkSharedDirProbes, plantSharedDirProbes, probeProblem, removeSharedDirProbes } from '../../../src/cluster/tcp/shared-dirs.ts';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'weir-shared-dirs-'));
  made.push(d);
  return d;
}

describe('shared directory probes', () => {
  it('a task manager that sees the same directories passes; one that sees another token or no probe is refused, naming each directory', () => {
    const [ckpt, out] = [tempDir(), tempDir()];
    const probes = plantSharedDirProbes(
      [
        { what: 'checkpoint directory', dir: ckpt },
        { what: "directory of FileSink 'sink'", dir: out },
      ],
      'job-1',
    );
    expect(probes.map((p) => p.file)).toEqual(['.weir-shared-job-1', '.weir-shared-job-1']);
    expect(new Set(probes.map((p) => p.token)).size).toBe(2);
    expect(() => checkSharedDirProbes(probes, 'job master 10.0.0.1:7000')).not.toThrow();

    // Another host's local directory at the same path: another job master's probe, or none at all.
    writeFileSync(path.join(ckpt, probes[0]!.file), 'someone-else');
    rmSync(path.join(out, probes[1]!.file));
    let thrown: unknown;
    try {
      checkSharedDirProbes(probes, 'job master 10.0.0.1:7000');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ClusterError);
    expect((thrown as ClusterError).code).toBe('CLUSTER_REFUSED');
    const message = (thrown as Error).message;
    expect(message).toContain('job master 10.0.0.1:7000: cannot run this job here');
    expect(message).toContain(
      `the checkpoint directory ${ckpt} is not the directory the job master wrote to (its probe .weir-shared-job-1 holds another job master's token)`,
    );
    expect(message).toMatch(
      new RegExp(
        `the directory of FileSink 'sink' ${out} is not the directory the job master wrote to \\(its probe \\.weir-shared-job-1 cannot be read here: ENOENT`,
      ),
    );
  });

  it('probeProblem decides from what was read', () => {
    const probe = { what: 'checkpoint directory', dir: '/x', file: '.weir-shared-j', token: 't' };
    expect(probeProblem(probe, { found: 't' })).toBeNull();
    expect(probeProblem(probe, { found: 'u' })).toContain("another job master's token");
    expect(probeProblem(probe, { error: 'EACCES' })).toContain('cannot be read here: EACCES');
  });

  it('removal deletes the probes and tolerates a directory already gone', () => {
    const [a, b] = [tempDir(), tempDir()];
    const probes = plantSharedDirProbes(
      [
        { what: 'a', dir: a },
        { what: 'b', dir: b },
      ],
      'job-2',
    );
    rmSync(b, { recursive: true });
    removeSharedDirProbes(probes);
    expect(readdirSync(a)).toEqual([]);
  });
});
