/**
 * Exit codes and the CLI's error classes. Usage errors (bad flags, a bad job module, invalid
 * options, an unknown job id) exit 2; a job that fails exits 1; a job cancelled (Ctrl-C, SIGTERM
 * or `weir cancel`) exits 130.
 */
import { WeirError } from '../index.ts';

export const EXIT_OK = 0;
export const EXIT_JOB_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_SIGINT = 130;
/** A cancelled job ends like one interrupted by Ctrl-C. */
export const EXIT_CANCELED = EXIT_SIGINT;

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
