/**
 * What earlier leaders of an HA job left behind: each job master writes its own job directory
 * (its job id), so a takeover leaves the deposed or dead leader's directory with its checkpoints,
 * published or not, and what a checkpoint in progress had written. Once the new leader has
 * published as many checkpoints of its own as `checkpointing.retained`, the retention rule would
 * keep none of the earlier ones: their job directories are removed (every `chk-<n>`, complete or
 * not, their shared files, then the directory when nothing else is in it). The new leader's own
 * checkpoints never refer to them: a takeover restores without claiming, so its first checkpoint
 * is full.
 */
import { jobId as toJobId } from '../core/ids.ts';
import { errorMessage } from '../core/errors.ts';
import type { CheckpointPointer } from '../cluster/ha/ha-store.ts';
import type { HaLeader } from '../cluster/ha/ha-leader.ts';
import { openCheckpointStorage } from '../storage/location.ts';
import { baseName, parentDir } from '../storage/paths.ts';
import type { ResolvedOptions } from './options.ts';

/**
 * Pure: the job directories of earlier leaders among the published checkpoints (their parents,
 * once each, under the same checkpoint root, other than `ownJobDir`).
 */
export function earlierJobDirs(published: readonly CheckpointPointer[], epoch: number, root: string, ownJobDir: string): string[] {
  const dirs = new Set<string>();
  for (const p of published) {
    const dir = parentDir(p.location);
    if (p.epoch < epoch && dir !== ownJobDir && parentDir(dir) === root) dirs.add(dir);
  }
  return [...dirs];
}

/** Removes the job directories `dirs` under the options' checkpoint storage; a failure is logged, never thrown (the job goes on). */
export async function removeEarlierJobDirs(options: ResolvedOptions, dirs: readonly string[], log: (line: string) => void): Promise<void> {
  for (const dir of dirs) {
    try {
      const storage = openCheckpointStorage(options.checkpointStorage, toJobId(baseName(dir)), { s3: options.s3 });
      for (const c of await storage.listCheckpointDirs()) await storage.discardCheckpoint(c.checkpointId);
      for (const path of (await storage.listSharedFiles?.()) ?? []) await storage.discardShared({ type: 'file', path, size: 0, checksum: 0 });
      await storage.discardJob();
      log(`removed the job directory ${dir} of an earlier leader: the checkpoints this leader retains replace every one of it`);
    } catch (err) {
      log(`could not remove the job directory ${dir} of an earlier leader: ${errorMessage(err)}`);
    }
  }
}

/**
 * The leadership a job master hands its job master core (`InternalRunOptions.leadership`): each
 * completed checkpoint is published through the store, and once `checkpointing.retained` of them
 * are published, the job directories of earlier leaders that the store's published list named are
 * removed (off the checkpoint path: the job does not wait for it).
 */
export function publishingLeader(
  leader: HaLeader,
  options: ResolvedOptions,
  log: (line: string) => void,
): { readonly epoch: number; publish(checkpointId: number, location: string): Promise<void> } {
  const { leadership } = leader;
  let own = 0;
  return {
    epoch: leadership.epoch,
    publish: async (checkpointId, location) => {
      await leadership.publish(checkpointId, location);
      own++;
      if (own !== options.checkpointing.retained) return;
      const ownDir = parentDir(location);
      const dirs = earlierJobDirs(leader.published, leadership.epoch, parentDir(ownDir), ownDir);
      if (dirs.length > 0) void removeEarlierJobDirs(options, dirs, log);
    },
  };
}
