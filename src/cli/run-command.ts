/** `weir run <job-module>`: loads a job module, applies the flags, runs the job to its end. */
import { StreamEnvironment, type CheckpointingOptions, type StreamEnvironmentOptions } from '../index.ts';
import { errorMessage } from '../core/errors.ts';
import { EXIT_JOB_FAILED, EXIT_OK, EXIT_SIGINT, UsageError, isUsageError } from './exit.ts';
import { oneLine } from './format.ts';
import { loadJobModule } from './load-job-module.ts';
import { failureLine, finalStatusLine, superviseJob } from './supervise.ts';

export interface RunFlags {
  readonly parallelism?: number;
  readonly checkpointDir?: string;
  readonly checkpointInterval?: number;
  readonly from?: string;
  readonly allowNonRestoredState?: boolean;
  readonly quiet?: boolean;
}

/** Module options with the flags applied on top (flags win). */
export function mergeOptions(module: StreamEnvironmentOptions, flags: RunFlags): StreamEnvironmentOptions {
  const merged: StreamEnvironmentOptions = { ...module };
  const moduleCheckpointing = module.checkpointing;
  const checkpointing: CheckpointingOptions = typeof moduleCheckpointing === 'object' && moduleCheckpointing !== null ? { ...moduleCheckpointing } : {};
  let touched = false;
  if (flags.parallelism !== undefined) merged.parallelism = flags.parallelism;
  if (flags.checkpointDir !== undefined) {
    merged.checkpointStorage = flags.checkpointDir;
    // Keep the run's checkpoints after it ends, so `--from` can pick them up.
    if (checkpointing.retention === undefined) {
      checkpointing.retention = 'retain-on-cancel';
      touched = true;
    }
  }
  if (flags.checkpointInterval !== undefined) {
    checkpointing.intervalMs = flags.checkpointInterval;
    touched = true;
  }
  if (touched) merged.checkpointing = checkpointing;
  return merged;
}

export async function runCommand(modulePath: string, flags: RunFlags): Promise<number> {
  const job = await loadJobModule(modulePath);
  const env = StreamEnvironment.create(mergeOptions(job.options, flags));
  try {
    await job.build(env);
  } catch (err) {
    if (isUsageError(err)) throw err;
    throw new UsageError(`job module ${job.path} failed to build the job: ${oneLine(errorMessage(err))}`, { cause: err });
  }
  const quiet = flags.quiet === true;
  const outcome = await superviseJob(
    env,
    job.name,
    { restoreFrom: flags.from, allowNonRestoredState: flags.allowNonRestoredState },
    { quiet, onStarted: (client) => quiet || process.stderr.write(`${describeStart(job.name, client.jobId, env)}\n`) },
  );
  process.stderr.write(`${finalStatusLine(outcome)}\n`);
  if (outcome.status === 'FAILED') {
    process.stderr.write(`${failureLine(outcome.error)}\n`);
    return EXIT_JOB_FAILED;
  }
  return outcome.status === 'FINISHED' ? EXIT_OK : EXIT_SIGINT;
}

function describeStart(name: string, jobId: string, env: StreamEnvironment): string {
  const o = env.options;
  const every = o.checkpointing.intervalMs === null ? 'final checkpoint only' : `checkpoints every ${o.checkpointing.intervalMs} ms`;
  const where = o.checkpointStorage === 'memory' ? 'in memory' : `in ${o.checkpointStorage}`;
  return `running job '${name}' as ${jobId}: parallelism ${o.parallelism}, ${every} ${where}`;
}
