/**
 * What a job checks and cleans before it starts on real directories: the checkpoint directory and
 * the embedded backend's local directory can be written (a ConfigError naming the option
 * otherwise, instead of restarts that cannot help), and what dead runs left half-done there is
 * removed: checkpoint directories without `_metadata`, embedded working directories.
 */
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalStore } from '../state/embedded/local-store.ts';
import { removeDeadRunsLeftovers, writeRunOwner } from '../storage/run-owner.ts';
import { makeDirsSync } from '../storage/make-dirs.ts';
import { checkWritableDir } from '../storage/writable-dir.ts';
import type { ResolvedOptions } from './options.ts';

/**
 * Runs the checks (throwing ConfigError) and clean-up; returns a line for each thing removed.
 * @param localDirOption the option that gave the embedded backend's local directory, named in errors.
 */
export function preflight(options: ResolvedOptions, jobDir: string | null, localDirOption = 'stateBackend.localDir'): string[] {
  const notes: string[] = [];
  if (jobDir !== null) {
    const root = path.dirname(jobDir);
    checkWritableDir(root, { option: 'checkpointStorage', what: 'checkpoint directory', create: true });
    makeDirsSync(jobDir);
    writeRunOwner(jobDir);
    for (const dir of removeDeadRunsLeftovers(root, jobDir)) notes.push(`removed ${dir}: an incomplete checkpoint of a run that is gone`);
  }
  const backend = options.stateBackend.type === 'changelog' ? options.stateBackend.over : options.stateBackend;
  if (backend.type === 'embedded') {
    const local = backend.localDir;
    if (local !== null) checkWritableDir(local, { option: localDirOption, what: 'embedded state directory', create: false });
    for (const dir of LocalStore.removeDeadStores(local ?? tmpdir())) notes.push(`removed ${dir}: embedded working state of a run that is gone`);
  }
  return notes;
}
