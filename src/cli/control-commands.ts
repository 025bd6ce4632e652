/**
 * `weir savepoint <job>`, `weir stop <job> --savepoint` and `weir cancel <job>`: ask a job running
 * under `weir run` through its control endpoint. The savepoint's path is the only line on stdout,
 * so `sp=$(weir stop <job> --savepoint)` works in scripts.
 */
import { absoluteLocation, resolveStorageLocation } from '../storage/location.ts';
import { callControl, resolveJob } from './control-client.ts';
import { EXIT_OK, UsageError } from './exit.ts';

export interface SavepointFlags {
  readonly dir?: string;
}

export interface StopFlags extends SavepointFlags {
  readonly savepoint?: boolean;
}

export type CancelFlags = StopFlags;

/** Where savepoints go when `--dir` is not given, against the caller's working directory. */
export const DEFAULT_SAVEPOINT_DIR = 'savepoints';

function savepointDir(flags: SavepointFlags): string {
  return absoluteLocation(flags.dir === undefined ? DEFAULT_SAVEPOINT_DIR : resolveStorageLocation(flags.dir, '--dir'));
}

function locationOf(answer: Record<string, unknown>): string {
  if (typeof answer.location !== 'string') throw new Error(`the control endpoint answered without a savepoint location: ${JSON.stringify(answer)}`);
  return answer.location;
}

export async function savepointCommand(job: string, flags: SavepointFlags): Promise<number> {
  const dir = savepointDir(flags);
  const target = resolveJob(job);
  const answer = await callControl(target, 'POST', '/savepoint', { dir });
  process.stdout.write(`${locationOf(answer)}\n`);
  return EXIT_OK;
}

export async function stopCommand(job: string, flags: StopFlags): Promise<number> {
  if (flags.savepoint !== true) {
    throw new UsageError(`stop needs --savepoint: it stops the job with a savepoint (to end a job without one: weir cancel ${job})`);
  }
  const dir = savepointDir(flags);
  const target = resolveJob(job);
  const answer = await callControl(target, 'POST', '/stop', { dir });
  process.stdout.write(`${locationOf(answer)}\n`);
  return EXIT_OK;
}

export async function cancelCommand(job: string, flags: CancelFlags): Promise<number> {
  if (flags.dir !== undefined && flags.savepoint !== true) throw new UsageError('--dir is where a savepoint goes: use it with --savepoint');
  const dir = flags.savepoint === true ? savepointDir(flags) : null;
  const target = resolveJob(job);
  if (dir !== null) {
    const answer = await callControl(target, 'POST', '/cancel', { savepoint: true, dir });
    process.stdout.write(`${locationOf(answer)}\n`);
  } else {
    await callControl(target, 'POST', '/cancel', {});
    process.stderr.write(`cancelled ${target.label}\n`);
  }
  return EXIT_OK;
}
