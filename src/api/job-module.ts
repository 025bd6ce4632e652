/**
 * The shape of a job module, the file `weir run`, `weir sim` and task managers in worker threads
 * load: its default export builds the job, the other exports are optional. Check a module against
 * it with `import * as job from './job.ts'; job satisfies JobModule;` (or annotate single exports).
 */
import type { JobResult } from '../cluster/job-master/job-events.ts';
import type { StreamEnvironment } from './environment.ts';
import type { StreamEnvironmentOptions } from './options.ts';

/** What `weir run` passes to a job module's `onFinished` export once the job FINISHED. */
export interface JobFinishedContext {
  /** The id the job ran under. */
  readonly jobId: string;
  /** The job's result: status, restarts, checkpoints. */
  readonly result: JobResult;
  /** The environment the job ran in: its options are the module's with the flags applied. */
  readonly env: StreamEnvironment;
  /** The checkpoint or savepoint the run started from (`--from`), or null. */
  readonly restoredFrom: string | null;
  /** Set when `weir stop --savepoint` ended the run: the savepoint's location (the input was not all read). */
  readonly stoppedWithSavepoint: string | null;
}

/**
 * Export `onFinished`: returns text for stdout (a summary, a verification), or throws when the
 * result is wrong, which makes `weir run` exit 1 with the message.
 */
export type OnFinished = (ctx: JobFinishedContext) => string | void | Promise<string | void>;

/**
 * Export `simCheck`, for `weir sim --job`: the module's own check of the records its sinks
 * committed (per sink uid, in commit order) against those of the fault-free run of the same seed.
 * Returns what is wrong, empty when the committed output keeps the guarantee.
 */
export type SimCheck = (
  committed: Readonly<Record<string, readonly unknown[]>>,
  oracle: Readonly<Record<string, readonly unknown[]>>,
  guarantee: 'exactly-once' | 'at-least-once',
) => readonly string[];

/**
 * The exports of a job module. Weir calls the default export with an environment it created from
 * `options` (with the command's flags applied) in every process and thread that runs the job, so
 * it must only build the graph: never call `execute()` (weir runs the job; a file that runs its job
 * at import is a script, refused by `weir run`) and keep side effects out of it.
 */
export interface JobModule {
  /** Builds the job on `env` (sources, transformations, sinks, each stateful operator with a `uid`). */
  readonly default: (env: StreamEnvironment) => void | Promise<void>;
  /** Options of the environment, before the command's flags (`--parallelism`, `--checkpoint-dir`, ...). */
  readonly options?: StreamEnvironmentOptions;
  /** The job's name (default: the file name without extension). */
  readonly name?: string;
  /** `weir run`: called after the job FINISHED, to report or verify its result. */
  readonly onFinished?: OnFinished;
  /** `weir sim`: the module's own output check; without it (or `simOutput`), only record counts per sink are compared. */
  readonly simCheck?: SimCheck;
  /** `weir sim`: the output does not depend on how inputs interleave, so it is compared as a multiset. Not with `simCheck`. */
  readonly simOutput?: 'order-independent';
}
