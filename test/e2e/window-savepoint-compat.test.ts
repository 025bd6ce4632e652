/**
 * A savepoint written before the window operator kept merging-window sets and timer keys between
 * elements (test/fixtures/savepoints/windows-0.1, made by make-windows.ts at commit 5f43a47)
 * restores with today's code: its open sessions, merging-window sets, sliding windows and pending
 * timers continue, and the job ends with every window of the reference computation exactly once.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CollectSink } from '../../src/index.ts';
import { baseOptions, tempDir } from '../support/jobs.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { windowSavepointJob, windowSavepointJobReference } from '../support/window-savepoint-job.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/savepoints/windows-0.1', import.meta.url));

describe('window state of an older savepoint', () => {
  it('the fixture holds open sessions with their merging-window sets, sliding windows and timers', async () => {
    const meta = await readCheckpointMetadataAt(join(FIXTURE, 'savepoint'));
    const sets = await keyedStateAt(meta, 'sessions', 'window-merging-set');
    expect(sets.size).toBeGreaterThan(0);
    for (const set of sets.values()) {
      for (const entry of set as number[][]) expect(entry).toHaveLength(4); // [start, end, stateStart, stateEnd]
    }
    for (const uid of ['sessions', 'sliding']) {
      expect((await keyedStateAt(meta, uid, 'window-contents')).size).toBeGreaterThan(0);
      const timers = await keyedStateAt(meta, uid, '_timers/window-timers');
      const keys = [...timers.values()].flatMap((m) => [...(m as Map<string, unknown>).keys()]);
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) expect(k).toMatch(/^e\d+\|-?\d+:\d+$/);
    }
  });

  it.each(['heap', 'embedded'] as const)('restores and ends with each session and sliding window once (%s)', async (stateBackend) => {
    const root = tempDir();
    // A copy: restoring never writes into a savepoint, but the fixture must stay as it was made.
    cpSync(join(FIXTURE, 'savepoint'), join(root, 'savepoint'), { recursive: true });
    const sink = new CollectSink<string>();
    const env = windowSavepointJob({ ...baseOptions({ checkpointStorage: join(root, 'chk') }), stateBackend, parallelism: 3 }, {}, sink);
    const result = await env.execute('window-savepoint-compat', { restoreFrom: join(root, 'savepoint') });
    expect(result.status).toBe('FINISHED');
    // What the first run committed before the savepoint, and after the restore the savepoint's
    // pre-committed output and everything after it.
    const before = JSON.parse(readFileSync(join(FIXTURE, 'committed-before.json'), 'utf8')) as string[];
    expect([...before, ...sink.results()].sort()).toEqual(windowSavepointJobReference());
  });
});
