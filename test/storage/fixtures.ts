/** Helpers for storage and metadata tests: temp dirs and sample metadata. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { CheckpointMetadata, SubtaskStateMeta } from '../../src/checkpoint/metadata/metadata.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';

/** Makes a fresh temp dir; `cleanup` removes every dir made so far. */
export function tempDirs(): { make(): Promise<string>; cleanup(): Promise<void> } {
  const made: string[] = [];
  return {
    async make() {
      const dir = await mkdtemp(path.join(tmpdir(), 'weir-storage-'));
      made.push(dir);
      return dir;
    },
    async cleanup() {
      await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

export function bytesOf(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** `n` bytes of a recognisable pattern. */
export function patternBytes(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

/** The first subtask of the first operator, where `sampleMetadata` puts every handle; throws when absent. */
export function firstSubtask(meta: CheckpointMetadata): SubtaskStateMeta {
  const subtask = meta.operators[0]?.subtasks[0];
  if (!subtask) throw new Error(`checkpoint ${meta.checkpointId} of ${meta.jobId} has no operator with a subtask`);
  return subtask;
}

/**
 * Metadata with one keyed operator (one key-groups handle per stream in `keyed`), an operator
 * state handle and a channel state handle when given.
 */
export function sampleMetadata(args: {
  job?: string;
  id: number;
  timestampMs?: number;
  kind?: 'checkpoint' | 'savepoint';
  keyed?: StreamStateHandle[];
  operator?: StreamStateHandle | null;
  channel?: StreamStateHandle | null;
}): CheckpointMetadata {
  const keyed = (args.keyed ?? []).map((stream, i) => ({
    type: 'key-groups' as const,
    range: { start: i * 64, end: i * 64 + 63 },
    offsets: [
      [i * 64, 0, 10],
      [i * 64 + 5, 10, 20],
    ] as const,
    stream,
    keyCounts: { counts: 3 + i, other: 0 },
  }));
  return {
    jobId: jobId(args.job ?? 'job-a'),
    checkpointId: checkpointId(args.id),
    timestampMs: args.timestampMs ?? 1_700_000_000_000 + args.id,
    kind: args.kind ?? 'checkpoint',
    operators: [
      {
        uid: 'counter',
        name: 'Count per key',
        parallelism: Math.max(1, keyed.length),
        maxParallelism: 128,
        subtasks: [
          {
            subtask: 0,
            keyed,
            operator: args.operator == null ? null : { type: 'operator', states: [{ name: 'offsets', mode: 'split', count: 2 }], stream: args.operator },
            channels: args.channel == null ? [] : [{ direction: 'input', gate: 0, channel: 1, stream: args.channel, buffers: 4 }],
          },
        ],
      },
      { uid: 'sink', name: 'Print', parallelism: 1, maxParallelism: 128, subtasks: [{ subtask: 0, keyed: [], operator: null, channels: [] }] },
    ],
  };
}
