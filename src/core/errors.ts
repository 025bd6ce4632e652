/**
 * Typed errors for operating errors (bad input, missing or corrupt files, failed jobs). Each has a
 * stable `code` and an optional `cause`; messages name the thing at fault (option, file, uid).
 */
export type WeirErrorCode =
  | 'INVALID_OPTION'
  | 'INVALID_JOB'
  | 'CORRUPT_FILE'
  | 'MISSING_FILE'
  | 'UNSUPPORTED_VERSION'
  | 'STORAGE_IO'
  | 'RESTORE_FAILED'
  | 'CHECKPOINT_FAILED'
  | 'JOB_FAILED'
  | 'JOB_CANCELLED'
  | 'INJECTED_FAULT'
  | 'CORRUPT_FRAME';

export class WeirError extends Error {
  readonly code: WeirErrorCode;
  constructor(code: WeirErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An option or argument a user gave is invalid; `option` names it. */
export class ConfigError extends WeirError {
  readonly option: string;
  constructor(option: string, message: string) {
    super('INVALID_OPTION', `${option}: ${message}`);
    this.option = option;
  }
}

/** The job definition is invalid (missing uid, bad graph, bad module). */
export class JobDefinitionError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_JOB', message, options);
  }
}

/** A persisted file could not be read or is not what was written; `file` names it. */
export class StorageError extends WeirError {
  readonly file: string;
  constructor(code: 'CORRUPT_FILE' | 'MISSING_FILE' | 'UNSUPPORTED_VERSION' | 'STORAGE_IO', file: string, message: string, options?: { cause?: unknown }) {
    super(code, `${file}: ${message}`, options);
    this.file = file;
  }
}

/** Restoring a job from a snapshot failed; nothing of the job was left running. */
export class RestoreError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RESTORE_FAILED', message, options);
  }
}

/** The job failed for good: restarts were exhausted or not allowed. */
export class JobFailedError extends WeirError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('JOB_FAILED', message, options);
  }
}

/** A fault deliberately injected by a test or the simulator. */
export class InjectedFault extends WeirError {
  readonly site: string;
  constructor(site: string) {
    super('INJECTED_FAULT', `injected fault at ${site}`);
    this.site = site;
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
