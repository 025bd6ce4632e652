import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../src/core/assert.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import {
  checkpointDir,
  checkpointDirName,
  exclusiveFilePath,
  isInside,
  isTempFileName,
  jobDir,
  memoryJobDir,
  metadataPath,
  parseCheckpointDirName,
  parseSavepointDirName,
  relativePath,
  resolveRelative,
  savepointDir,
  sharedFilePath,
  stateFileName,
  taskOwnedDir,
  tempFilePath,
} from '../../src/storage/paths.ts';

const ROOT = path.resolve('/ckpt');
const JOB = jobDir(ROOT, jobId('job-a'));

describe('storage paths', () => {
  it('builds the layout of DESIGN.md', () => {
    expect(JOB).toBe(path.join(ROOT, 'job-a'));
    expect(checkpointDir(JOB, checkpointId(7))).toBe(path.join(ROOT, 'job-a', 'chk-7'));
    expect(metadataPath(checkpointDir(JOB, checkpointId(7)))).toBe(path.join(ROOT, 'job-a', 'chk-7', '_metadata'));
    expect(exclusiveFilePath(JOB, checkpointId(7), 'keyed-x-0')).toBe(path.join(ROOT, 'job-a', 'chk-7', 'keyed-x-0'));
    expect(sharedFilePath(JOB, 'sst-1')).toBe(path.join(ROOT, 'job-a', 'shared', 'sst-1'));
    expect(taskOwnedDir(JOB)).toBe(path.join(ROOT, 'job-a', 'taskowned'));
    expect(savepointDir('/sp', checkpointId(12), 'a1b2')).toBe(path.join('/sp', 'savepoint-12-a1b2'));
  });

  it('parses only canonical chk-<n> and savepoint names', () => {
    expect(parseCheckpointDirName('chk-0')).toBe(0);
    expect(parseCheckpointDirName('chk-123')).toBe(123);
    for (const bad of ['chk-', 'chk-01', 'chk-1a', 'chk--1', 'xchk-1', 'chk-1.tmp', 'shared', 'chk-99999999999999999999']) {
      expect(parseCheckpointDirName(bad)).toBeNull();
    }
    expect(checkpointDirName(checkpointId(parseCheckpointDirName('chk-42')!))).toBe('chk-42');
    expect(parseSavepointDirName('savepoint-12-a1b2')).toEqual({ checkpointId: 12, rand: 'a1b2' });
    expect(parseSavepointDirName('savepoint-12')).toBeNull();
    expect(parseSavepointDirName('chk-12')).toBeNull();
  });

  it('makes state file names safe and unique by suffix', () => {
    expect(stateFileName('keyed-counter-0', '3')).toBe('keyed-counter-0-3');
    expect(stateFileName('keyed/../../etc passwd', 'x')).toBe('keyed_.._.._etc_passwd-x');
    expect(stateFileName('..', 'x')).toBe('_-x');
    expect(stateFileName('', 'x')).toBe('state-x');
    expect(() => stateFileName('a', 'b/c')).toThrow(AssertionError);
  });

  it('refuses unsafe job ids and file names', () => {
    expect(() => jobDir(ROOT, jobId('../etc'))).toThrow(AssertionError);
    expect(() => jobDir(ROOT, jobId('..'))).toThrow(AssertionError);
    expect(() => memoryJobDir(jobId('a/b'))).toThrow(AssertionError);
    expect(() => sharedFilePath(JOB, '../x')).toThrow(AssertionError);
  });

  it('names temporary files for atomic writes', () => {
    const tmp = tempFilePath('/x/chk-1/_metadata', 'k3');
    expect(tmp).toBe('/x/chk-1/_metadata.tmp-k3');
    expect(isTempFileName(path.basename(tmp))).toBe(true);
    expect(isTempFileName('_metadata')).toBe(false);
  });

  it('relates file-system paths relative to the metadata directory and back', () => {
    const dir = checkpointDir(JOB, checkpointId(3));
    const own = exclusiveFilePath(JOB, checkpointId(3), 'keyed-x-0-3');
    const shared = sharedFilePath(JOB, 'abc');
    expect(relativePath(dir, own)).toBe('keyed-x-0-3');
    expect(relativePath(dir, shared)).toBe('../shared/abc');
    expect(resolveRelative(dir, '../shared/abc')).toBe(shared);
    expect(resolveRelative('/elsewhere/copy', 'keyed-x-0-3')).toBe(path.resolve('/elsewhere/copy/keyed-x-0-3'));
    expect(isInside(dir, own)).toBe(true);
    expect(isInside(dir, shared)).toBe(false);
    expect(isInside(JOB, shared)).toBe(true);
    expect(isInside(path.join(ROOT, 'job'), path.join(ROOT, 'job-a', 'x'))).toBe(false);
  });

  it('relates memory paths the same way', () => {
    const job = memoryJobDir(jobId('job-a'));
    const dir = checkpointDir(job, checkpointId(3));
    expect(dir).toBe('memory:job-a/chk-3');
    const shared = sharedFilePath(job, 'abc');
    expect(shared).toBe('memory:job-a/shared/abc');
    expect(relativePath(dir, shared)).toBe('../shared/abc');
    expect(resolveRelative(dir, '../shared/abc')).toBe(shared);
    expect(isInside(dir, `${dir}/x`)).toBe(true);
    expect(isInside(dir, shared)).toBe(false);
    expect(isInside(dir, '/chk-3/x')).toBe(false);
    expect(() => relativePath(dir, '/abs/file')).toThrow(AssertionError);
  });
});
