/**
 * Exit codes and the CLI's error classes. Usage errors (bad flags, a bad job module, invalid
 * options, an unknown job id, an unsafe job registry) exit 2; a job that fails exits 1; a job
 * cancelled (Ctrl-C, SIGTERM or `weir cancel`) exits 130. `weir --help` prints EXIT_CODE_HELP.
 */
import { WeirError } from '../index.ts';
import { SIM_EXIT } from '../sim/runner.ts';

export const EXIT_OK = 0;
export const EXIT_JOB_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_SIGINT = 130;
/** A cancelled job ends like one interrupted by Ctrl-C. */
export const EXIT_CANCELED = EXIT_SIGINT;

/** Every exit code of `weir`, with its meaning: the one place they are documented (`weir --help`). */
export const EXIT_CODE_HELP: readonly (readonly [number, string])[] = [
  [EXIT_OK, 'success: the job FINISHED, or the command did what it was asked'],
  [EXIT_JOB_FAILED, 'the job FAILED or its own check failed (onFinished, the demo); a running job could not do it; weir sim: a checker violation'],
  [EXIT_USAGE, 'usage error: a bad flag or argument, a bad job module, invalid options, an unknown job, an unsafe job registry'],
  [SIM_EXIT.liveness, 'weir sim: a liveness failure (a seed did not finish)'],
  [SIM_EXIT.crash, 'weir sim: a crash (an unexpected error in a seed)'],
  [EXIT_CANCELED, 'the job was cancelled (Ctrl-C, SIGTERM or weir cancel)'],
];

/** The command line is wrong: a flag, an argument, or the job module it names. */
export class UsageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}

/** A verification the CLI runs itself (the demo's exactly-once check) did not hold. */
export class VerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VerificationError';
  }
}

const USAGE_CODES: ReadonlySet<string> = new Set(['INVALID_OPTION', 'INVALID_JOB', 'MISSING_FILE', 'CORRUPT_FILE', 'UNSUPPORTED_VERSION']);

/** Whether an error raised before a job started means the user asked for something impossible. */
export function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || (err instanceof WeirError && USAGE_CODES.has(err.code));
}
