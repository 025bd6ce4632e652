/**
 * The changelog restore alone: `node --import tsx bench/lib/changelog-restore.ts [KEYS] [UPDATES] [SHARE] [CHECKPOINT_EVERY]`
 * writes KEYS keys of 100-byte values through the changelog over the embedded backend,
 * materializes them (the first checkpoint), takes UPDATES random updates (the log), checkpoints,
 * (with SHARE and CHECKPOINT_EVERY, checkpoints along the way and materializations by the log's
 * size, so the materialization is an incremental chain), and times restoring that checkpoint (materialization + replay) into a fresh embedded backend:
 * wall ms and process CPU ms, one JSON line. `PROF=FILE` writes a CPU profile of the restore alone.
 * Run it from two trees, alternating, to compare them (BENCHMARKS.md, changelog).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueStateDescriptor } from '../../src/index.ts';
import type { ValueState } from '../../src/index.ts';
import { checkpointId, jobId, keyGroup } from '../../src/core/ids.ts';
import { realScheduler, systemClock, yieldToEventLoop } from '../../src/core/adapters.ts';
import { SeededRandom } from '../../src/core/time.ts';
import { ChangelogKeyedStateBackend, CHANGELOG_STREAMS_ID } from '../../src/state/changelog/changelog-keyed-backend.ts';
import type { ChangelogStateHandle } from '../../src/state/handles/changelog.ts';
import { keyedHandleKind, keyedHandleSizes } from '../../src/state/handles/registry.ts';
import { EmbeddedKeyedStateBackend } from '../../src/state/embedded/embedded-keyed-backend.ts';
import { assignToKeyGroup } from '../../src/state/key-groups.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
const KEYS = Number(process.argv[2] ?? 200_000);
const UPDATES = Number(process.argv[3] ?? 1_000_000);
/** `materializationLogShareMax` (default: never by size) and a checkpoint every CHECKPOINT_EVERY updates (default: none until the end). */
const SHARE = Number(process.argv[4] ?? Number.POSITIVE_INFINITY);
const CHECKPOINT_EVERY = Number(process.argv[5] ?? Number.POSITIVE_INFINITY);
const yieldTurn = yieldToEventLoop;
const ALL = { start: 0, end: 127 };
const dir = mkdtempSync(join(tmpdir(), 'weir-replay-'));
const storage = new FsCheckpointStorage(join(dir, 'c'), jobId('r'));
await storage.initialize();
const args = { uid: 'bench', subtask: 0, keyGroupRange: ALL, maxParallelism: 128 };
const emb = new EmbeddedKeyedStateBackend(args, { incremental: true, cacheEntriesMax: 100_000, localDir: dir });
const settings = {
  uploadBytesThreshold: 10 << 20,
  uploadDelayMs: 10,
  uploadAttemptsMax: 3,
  uploadTimeoutMs: 30_000,
  inFlightBytesMax: 100 << 20,
  materializationIntervalMs: 1_000_000,
  materializationLogShareMax: SHARE,
};
const b = new ChangelogKeyedStateBackend(
  emb,
  settings,
  { streams: storage.streamFactory(CHANGELOG_STREAMS_ID), clock: systemClock, scheduler: realScheduler },
  'bench-0',
);
const d = new ValueStateDescriptor<string>('v');
const s = b.getState<ValueState<string>>(d);
const val = (k: number, n: number) => `${k}:${n}:`.padEnd(100, 'x');
const setKey = (k: number) => b.setCurrentKey(k, keyGroup(assignToKeyGroup(k, 128)));
for (let k = 0; k < KEYS; k++) {
  setKey(k);
  s.update(val(k, 0));
  if (k % 10000 === 0) await yieldTurn();
}
let id = 0;
// first checkpoint waits for a materialization
let last = await b.snapshot(checkpointId(++id), storage.streamFactory(checkpointId(id))).run(yieldTurn);
b.notifyCheckpointComplete(checkpointId(id));
const r = new SeededRandom(27);
for (let i = 0; i < UPDATES; i++) {
  const k = r.int(KEYS);
  setKey(k);
  s.update(val(k, i + 1));
  if (i % 500 === 0) await yieldTurn();
  if ((i + 1) % CHECKPOINT_EVERY === 0) {
    const cid = checkpointId(++id);
    await b.snapshot(cid, storage.streamFactory(cid)).run(yieldTurn);
    b.notifyCheckpointComplete(cid);
  }
}
last = await b.snapshot(checkpointId(++id), storage.streamFactory(checkpointId(id))).run(yieldTurn);
b.notifyCheckpointComplete(checkpointId(id));
// A materialization the log's size started runs on in the background: let it finish first, so it is not timed.
while (b.materializing) await yieldTurn();
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const sess = new Session();
sess.connect();
if (process.env.PROF) {
  await sess.post('Profiler.enable');
  await sess.post('Profiler.start');
}
const c0 = cpu();
const t0 = performance.now();
const fresh = new EmbeddedKeyedStateBackend(args, { cacheEntriesMax: 100_000, localDir: dir });
fresh.getState(d);
await fresh.restore(last, (h) => storage.readState(h));
if (process.env.PROF) {
  const { profile } = await sess.post('Profiler.stop');
  writeFileSync(process.env.PROF, JSON.stringify(profile));
}
const handle = last[0] as ChangelogStateHandle;
const shape = {
  materializationFiles: handle.materialization.handles.reduce((n, h) => n + keyedHandleKind(h).streams(h).length, 0),
  materializationBytes: handle.materialization.handles.reduce((n, h) => n + keyedHandleSizes(h).stateBytes, 0),
  segments: handle.segments.filter((g) => g.toSeq > handle.materialization.seq).length,
  logChanges: handle.toSeq - handle.materialization.seq,
};
console.log(
  JSON.stringify({ ...shape, keys: KEYS, updates: UPDATES, restoreMs: performance.now() - t0, cpuMs: cpu() - c0, restored: fresh.entries('v').length }),
);
fresh.dispose();
b.dispose();
rmSync(dir, { recursive: true, force: true });
